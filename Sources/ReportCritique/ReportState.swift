internal import Foundation

/// Where a report stands (`GET /api/sessions/ID/report`; a study's report says it the same way).
package struct ReportState: Codable, Sendable, Equatable {
    package enum State: String, Codable, Sendable { case none, running, ready, failed }
    package var state: State
    package var url: String?
    package var error: String?
    /// When it was written (seconds since 1970).
    package var generated: Double?

    package static let none = ReportState(state: .none)
    package static let running = ReportState(state: .running)
    package static func ready(url: String, generated: Double?) -> ReportState { ReportState(state: .ready, url: url, generated: generated) }
    package static func failed(_ error: any Error) -> ReportState { ReportState(state: .failed, error: "\(error)") }

    /// What a report's folder says when nothing writes it: ready, served at `url`, since its `index` was written; or none.
    package static func written(index: String, url: String) -> ReportState {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: index) else { return .none }
        return .ready(url: url, generated: (attributes[.modificationDate] as? Date)?.timeIntervalSince1970)
    }
}

/// A session's report that was written, or failed.
package struct FinishedReport: Sendable, Equatable {
    package var session: Int64
    package var name: String
    package var state: ReportState

    package init(session: Int64, name: String, state: ReportState) {
        self.session = session
        self.name = name
        self.state = state
    }
}

/// What a follower of the session reports hears: each report written or failed, or how many it missed
/// while it did not keep up (it reads the states again then).
package enum ReportNews: Sendable, Equatable {
    case finished(FinishedReport)
    case missed(Int)
}
