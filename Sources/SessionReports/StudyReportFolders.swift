internal import Foundation
package import Logging
internal import ReportCritique
internal import SessionModel

/// Until issue 39 the console wrote the study reports it was asked for into `<data>/reports/study-NAME/`, beside
/// the completion's `<data>/reports/studies/NAME/`. At start muevald moves each such folder into the one folder of
/// study reports. Where both hold the same report (the study's, or one iteration's), the newer one (by its
/// index.html) is kept and the older removed, each removal logged: no report goes without a word.
package struct StudyReportFolders: Sendable {
    /// What the upgrade did, each step logged.
    package enum Step: Sendable, Equatable, CustomStringConvertible {
        case moved(from: String, to: String)
        /// Both held the report: `kept` is the newer, `removed` the older, deleted.
        case keptNewer(kept: String, removed: String)
        case cannotMove(String, reason: String)

        package var description: String {
            switch self {
            case .moved(let from, let to):
                "study reports: moved \(from) to \(to)"
            case .keptNewer(let kept, let removed):
                "study reports: \(removed) and \(kept) held the same report: kept the newer, \(kept), and removed \(removed)"
            case .cannotMove(let path, let reason):
                "study reports: cannot move \(path) into the study reports' folder, left where it is: \(reason)"
            }
        }
    }

    /// The folders of before: `study-NAME`.
    static let oldPrefix = "study-"

    private let locations: ReportLocations

    package init(dataDirectory: String) {
        locations = ReportLocations(dataDirectory: dataDirectory)
    }

    /// Moves every old folder; nothing to do leaves everything as it is.
    @discardableResult
    package func upgrade(logger: Logger) -> [Step] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: locations.root)) ?? []
        var steps: [Step] = []
        for name in names.sorted() where name.hasPrefix(Self.oldPrefix) {
            let study = String(name.dropFirst(Self.oldPrefix.count))
            // Only what the console wrote: a study's name is one safe path component.
            guard (try? StudyError.checkName(study, as: "study name")) != nil else { continue }
            steps += move(locations.root + "/" + name, to: locations.study(study))
        }
        for step in steps {
            switch step {
            case .moved: logger.notice("\(step)")
            case .keptNewer: logger.warning("\(step)")
            case .cannotMove: logger.error("\(step)")
            }
        }
        return steps
    }

    private func move(_ old: String, to new: String) -> [Step] {
        let files = FileManager.default
        do {
            guard files.fileExists(atPath: new) else {
                try files.createDirectory(atPath: locations.studies, withIntermediateDirectories: true)
                try files.moveItem(atPath: old, toPath: new)
                return [.moved(from: old, to: new)]
            }
            // Both exist: report by report. The study's own report is the folder's files but its iterations'.
            let entries = try files.contentsOfDirectory(atPath: old)
            var steps: [Step] = []
            let own = entries.filter { !Self.isIteration($0) }
            if !own.isEmpty {
                let theirs = try files.contentsOfDirectory(atPath: new).filter { !Self.isIteration($0) }
                steps += try keepNewer(old: (old, own), new: (new, theirs))
            }
            for iteration in entries.filter(Self.isIteration) {
                let theirs = files.fileExists(atPath: new + "/" + iteration) ? [iteration] : []
                steps += try keepNewer(old: (old, [iteration]), new: (new, theirs), index: iteration + "/index.html")
            }
            try files.removeItem(atPath: old)
            return steps
        } catch {
            return [.cannotMove(old, reason: "\(error)")]
        }
    }

    /// One report, as the entries of a folder that make it up: the newer stays (in `new`), the older goes.
    private func keepNewer(old: (folder: String, entries: [String]), new: (folder: String, entries: [String]),
                           index: String = "index.html") throws -> [Step] {
        let files = FileManager.default
        func written(_ folder: String) -> Date? {
            (try? files.attributesOfItem(atPath: folder + "/" + index))?[.modificationDate] as? Date
        }
        let oldWritten = written(old.folder), newWritten = written(new.folder)
        let oldPath = old.folder + "/" + index, newPath = new.folder + "/" + index
        // Files without an index.html are what a failed write left, no report.
        if let newWritten, newWritten >= oldWritten ?? .distantPast {
            for entry in old.entries { try files.removeItem(atPath: old.folder + "/" + entry) }
            return oldWritten == nil ? [] : [.keptNewer(kept: newPath, removed: oldPath)]
        }
        for entry in new.entries { try files.removeItem(atPath: new.folder + "/" + entry) }
        for entry in old.entries { try files.moveItem(atPath: old.folder + "/" + entry, toPath: new.folder + "/" + entry) }
        return (newWritten == nil ? [] : [.keptNewer(kept: oldPath, removed: newPath)]) + [.moved(from: oldPath, to: newPath)]
    }

    /// `iteration-N`: one iteration's report inside a study's folder.
    static func isIteration(_ entry: String) -> Bool {
        entry.hasPrefix(ReportLocations.iterationPrefix) && Int(entry.dropFirst(ReportLocations.iterationPrefix.count)) != nil
    }
}
