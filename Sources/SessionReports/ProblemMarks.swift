internal import Foundation
internal import NIOConcurrencyHelpers
package import ReportCritique

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
