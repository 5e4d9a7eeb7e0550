internal import Foundation
internal import Logging
internal import NIOConcurrencyHelpers
internal import ReplayIndex
package import ReportCritique
package import SessionCore
package import SessionModel

/// What the console needs of muevald's reports, which the daemon writes (its report services are a peer the
/// console does not import): the daemon builds this from them. The folders and their URLs are
/// `ReportLocations`', the one layout both sides read.
package struct ConsoleReportSource: Sendable {
    /// Where a session's report stands.
    package var sessionState: @Sendable (_ session: Int64, _ name: String) -> ReportState
    /// Whether a session report's screenshots are being written into its folder (the page may be offered already).
    package var copyingScreenshots: @Sendable (_ session: Int64, _ name: String) -> Bool
    /// The problems the session's default report found, for the replay's scrubber.
    package var problems: @Sendable (_ session: Int64) -> [ProblemMark]
    /// Writes a session's report, or joins the task writing it, and returns once it is written or failed.
    package var writeSession: @Sendable (_ record: SessionRecord, _ name: String, _ configuration: ReportConfiguration) async -> ReportState
    /// Each session report written or failed from now on, and what the follower missed.
    package var follow: @Sendable () -> BroadcastSubscription<ReportNews>
    /// Where a study's report stands (of every iteration: nil).
    package var studyState: @Sendable (_ study: String, _ iteration: Int?) -> ReportState
    /// Starts writing a study's report unless it is being written; returns at once.
    package var startStudy: @Sendable (_ data: StudyData, _ iteration: Int?) -> ReportState

    package init(sessionState: @escaping @Sendable (Int64, String) -> ReportState,
                 copyingScreenshots: @escaping @Sendable (Int64, String) -> Bool,
                 problems: @escaping @Sendable (Int64) -> [ProblemMark],
                 writeSession: @escaping @Sendable (SessionRecord, String, ReportConfiguration) async -> ReportState,
                 follow: @escaping @Sendable () -> BroadcastSubscription<ReportNews>,
                 studyState: @escaping @Sendable (String, Int?) -> ReportState,
                 startStudy: @escaping @Sendable (StudyData, Int?) -> ReportState) {
        self.sessionState = sessionState
        self.copyingScreenshots = copyingScreenshots
        self.problems = problems
        self.writeSession = writeSession
        self.follow = follow
        self.studyState = studyState
        self.startStudy = startStudy
    }
}

/// `POST /api/sessions/ID/report`: sections, or a saved configuration's name.
struct ReportChoice: Decodable, Sendable {
    var sections: [String]?
    var configuration: String?
}

/// What the report form offers.
struct ReportOptions: Encodable {
    struct Section: Encodable { var name: String; var title: String }
    struct Configuration: Encodable { var name: String; var sections: [String] }
    var sections: [Section]
    var configurations: [Configuration]
}

/// The console's side of reports: the form's options, reports on request, and the replay index, which
/// carries the default report's problems. The reports themselves, the automatic one of every stopped
/// session among them, are the daemon's (`source`), shared with the console.
struct ConsoleReports: Sendable {
    let source: ConsoleReportSource
    let configurations: ReportConfigurationStore
    let locations: ReportLocations
    private let logger: Logger
    private let replayIndexWrites = ReplayIndexWrites()

    init(source: ConsoleReportSource, dataDirectory: String, configurations: ReportConfigurationStore, logger: Logger) {
        self.source = source
        locations = ReportLocations(dataDirectory: dataDirectory)
        self.configurations = configurations
        self.logger = logger
    }

    func options() -> ReportOptions {
        ReportOptions(
            sections: SectionKind.allCases.map { .init(name: $0.rawValue, title: $0.rawValue.prefix(1).uppercased() + $0.rawValue.dropFirst()) },
            configurations: configurations.names().compactMap { name in
                (try? configurations.load(name)).map { .init(name: name, sections: $0.sections.map(\.rawValue)) }
            })
    }

    /// The replay index (ReplayIndex) of a session, open. It is kept as `replay.index` next to the
    /// session's reports and written again when it is missing, of another version, of fewer events than
    /// the session has now (a recording session, or a note added), or older than the default report
    /// (whose news this console missed, so its problems are not in it). A stopped session's file is
    /// written once, after its default report, so that the Replay page of a one-hour session does not
    /// wait for a scan of it. `rebuild`: written again whatever it holds.
    func replayIndex(of record: SessionRecord, rebuild: Bool = false) async throws -> ReplayIndexFile {
        let problems = source.problems(record.id)
        let directory = locations.session(record.id)
        let path = "\(directory)/\(ReplayIndex.fileName)"
        let report = source.sessionState(record.id, ReportLocations.defaultName)
        let fresh = { @Sendable () throws -> ReplayIndexFile? in
            guard let file = try ReplayIndexFile(path: path), file.preamble.sessionEvents == record.events,
                  !Self.older(path, than: report) else { return nil }
            return file
        }
        if !rebuild, let file = try await blocking(fresh) { return file }
        // Pages asking at once (and the report's follower) wait for one writing instead of each writing the file.
        return try await replayIndexWrites.run(record.id, joining: !rebuild) {
            try await blocking {
                if !rebuild, let file = try fresh() { return file }
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                try ReplayIndex.write(record: record, problems: problems, to: path)
                // The JSON of the index's first version, `replay-index-EVENTS.json`, is not read any more.
                for old in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where old.hasPrefix("replay-index-") {
                    try? FileManager.default.removeItem(atPath: directory + "/" + old)
                }
                guard let file = try ReplayIndexFile(path: path) else { throw ReplayIndexError(damaged: "it cannot be read back") }
                return file
            }
        }
    }

    /// The file the page read its head from: the replay index as it is, made again by no one here (nil: none).
    func currentReplayIndex(of record: SessionRecord) async throws -> ReplayIndexFile? {
        let path = "\(locations.session(record.id))/\(ReplayIndex.fileName)"
        return try await blocking { try ReplayIndexFile(path: path) }
    }

    private static func older(_ path: String, than report: ReportState) -> Bool {
        guard let generated = report.generated,
              let written = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date else { return false }
        return written.timeIntervalSince1970 < generated
    }

    /// Writes the report the page asked for and returns when it is there.
    func generate(_ record: SessionRecord, choice: ReportChoice) async throws -> ReportState {
        var configuration = ReportConfiguration()
        var name = ReportLocations.defaultName
        if let saved = choice.configuration, !saved.isEmpty {
            do {
                configuration = try configurations.load(saved)
            } catch {
                throw ConsoleError.badRequest("\(error)")
            }
            name = "config-" + ReportLocations.directoryName(saved)
        }
        if let sections = choice.sections {
            do {
                configuration.sections = try SectionKind.list(sections.joined(separator: ","))
            } catch {
                throw ConsoleError.badRequest("\(error)")
            }
            if Set(configuration.sections) != Set(SectionKind.allCases) { name = "sections-" + configuration.sections.map(\.rawValue).joined(separator: "-") }
        }
        guard !configuration.sections.isEmpty else { throw ConsoleError.badRequest("choose at least one section") }
        return await source.writeSession(record, name, configuration)
    }

    /// Follows the reports as they are written: the pages hear of each, and the problems of a default report
    /// (the automatic one among them) go into the session's replay index. News it missed, it cannot name: the
    /// pages read the sessions again, and a replay index older than its report is made again when it is asked for.
    func follow(_ news: BroadcastSubscription<ReportNews>, updates: ConsoleUpdates, registry: SessionRegistry) async {
        while let batch = await news.next() {
            for item in batch {
                switch item {
                case .missed:
                    updates.send(ConsoleUpdates.sessionsChanged)
                case .finished(let report):
                    if let message = try? ConsoleUpdates.report(session: report.session, name: report.name, state: report.state) { updates.send(message) }
                    guard report.name == ReportLocations.defaultName,
                          let record = try? await blocking({ try registry.find(String(report.session)) }) else { continue }
                    do {
                        _ = try await replayIndex(of: record, rebuild: true)
                    } catch {
                        logger.error("replay index of session \(record.id) failed: \(error)")
                    }
                }
            }
        }
    }
}

/// The replay indexes being written, one task per session: who asks meanwhile waits for it.
private final class ReplayIndexWrites: Sendable {
    private let running = NIOLockedValueBox<[Int64: Task<ReplayIndexFile, any Error>]>([:])

    /// Runs `write` for `session`, or (`joining`) waits for the one under way. A write that must not join
    /// (the default report's problems, which one begun before it lacks) runs anyway and is the one others join.
    func run(_ session: Int64, joining: Bool, _ write: @escaping @Sendable () async throws -> ReplayIndexFile) async throws -> ReplayIndexFile {
        let task = running.withLockedValue { running in
            if joining, let task = running[session] { return task }
            let task = Task { try await write() }
            running[session] = task
            return task
        }
        defer { running.withLockedValue { if $0[session] == task { $0[session] = nil } } }
        return try await task.value
    }
}
