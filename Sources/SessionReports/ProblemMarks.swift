internal import Foundation
internal import NIOConcurrencyHelpers
package import ReportCritique
package import SessionAnalysis
internal import WireProtocol

/// The problems each session's default report found, for the replay's scrubber: kept in memory once read,
/// from the report's `problems.json` (written beside its index.html), so that a replay does not read it again.
package final class ProblemMarks: Sendable {
    /// The file of a report's problem marks.
    package static let file = "problems.json"

    private let marks = NIOLockedValueBox<[Int64: [ProblemMark]]>([:])
    private let locations: ReportLocations

    package init(locations: ReportLocations) {
        self.locations = locations
    }

    /// The marks of the session's default report; none before it is written.
    package func of(_ session: Int64) -> [ProblemMark] {
        if let marks = marks.withLockedValue({ $0[session] }) { return marks }
        let file = locations.session(session, report: ReportLocations.defaultName) + "/" + Self.file
        guard let data = FileManager.default.contents(atPath: file),
              let read = try? JSONDecoder().decode([ProblemMark].self, from: data) else { return [] }
        marks.withLockedValue { $0[session] = read }
        return read
    }

    /// Writes the marks of a report into its folder; they are the session's when it is the default report.
    package func write(_ found: [ProblemMark], session: Int64, report name: String) throws {
        let folder = locations.session(session, report: name)
        try JSONEncoder().encode(found).write(to: URL(fileURLWithPath: folder + "/" + Self.file), options: .atomic)
        if name == ReportLocations.defaultName { marks.withLockedValue { $0[session] = found } }
    }

    package func forget(_ session: Int64) {
        marks.withLockedValue { $0[session] = nil }
    }
}

extension ProblemMark {
    /// Marks a scrubber this many pixels wide could tell apart, at most, per title.
    package static let resolution = 2_000

    /// The marks of `problems` (in time order) for the scrubber: of one title, one per 1/`resolution` of their
    /// span, the first in it. A session of endless rage taps has tens of thousands of problems (the report lists
    /// each); the scrubber shows where they are, and its marks were 15 MB of a 1M-event stop's peak (heaptrack,
    /// issue 41) as JSONEncoder wrote them.
    package static func scrubber(_ problems: Problems) -> [ProblemMark] {
        guard let first = problems.first?.time, let last = problems.last?.time else { return [] }
        var seen: Set<Fold> = []
        return problems.compactMap { problem in
            let title = problem.kind.rawValue + (problem.view.map { " in " + $0 } ?? "")
            let bucket = last > first ? Int(saturating: (problem.time - first) / (last - first) * Double(resolution)) : 0
            return seen.insert(Fold(title: title, bucket: bucket)).inserted ? ProblemMark(t: problem.time, title: title) : nil
        }
    }

    private struct Fold: Hashable {
        var title: String
        var bucket: Int
    }
}
