internal import NIOConcurrencyHelpers
package import ReportCritique

/// The last failure of each report, by key, until it is written again: a failed report leaves no file, so
/// without this the console could not say why there is none.
package final class ReportFailures<Key: Hashable & Sendable>: Sendable {
    private let failures = NIOLockedValueBox<[Key: ReportState]>([:])

    package init() {}

    package func failure(of key: Key) -> ReportState? {
        failures.withLockedValue { $0[key] }
    }

    /// Remembers `outcome` when it is a failure; any other outcome clears the key's.
    package func record(_ outcome: ReportState, for key: Key) {
        failures.withLockedValue { $0[key] = outcome.state == .failed ? outcome : nil }
    }

    package func forget(where matches: (Key) -> Bool) {
        failures.withLockedValue { $0 = $0.filter { !matches($0.key) } }
    }
}
