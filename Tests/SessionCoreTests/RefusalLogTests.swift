import Logging
@testable import SessionCore
import SessionModel
import Synchronization
import Testing

/// Refusals logged at most once a minute per address and reason, on a simulated clock: the first line, quiet for
/// the rest of the minute, then a line that says how many went unlogged; the table bounded, and what did not fit
/// tallied rather than logged. And `Refusals`: every refusal counted by reason, logged through that rule.
@Suite struct RefusalLogTests {
    @Test func oneLineAMinutePerAddressAndReasonThenTheCountOfTheQuietOnes() {
        var log = RefusalLog()
        #expect(log.note(.webPerAddress, address: "10.0.0.7", now: 1000) == .log(suppressed: 0, untracked: 0))
        for second in 1...59 {
            #expect(log.note(.webPerAddress, address: "10.0.0.7", now: 1000 + Double(second)) == .quiet)
        }
        // Another reason of the same address, and the same reason of another address, have lines of their own.
        #expect(log.note(.webRate, address: "10.0.0.7", now: 1030) == .log(suppressed: 0, untracked: 0))
        #expect(log.note(.webPerAddress, address: "10.0.0.8", now: 1030) == .log(suppressed: 0, untracked: 0))
        // A minute after the first line: the next, with the 59 left out.
        #expect(log.note(.webPerAddress, address: "10.0.0.7", now: 1060) == .log(suppressed: 59, untracked: 0))
        #expect(log.note(.webPerAddress, address: "10.0.0.7", now: 1061) == .quiet)
        // Hours later: a line at once, the one left out of the last minute counted in it.
        #expect(log.note(.webPerAddress, address: "10.0.0.7", now: 9000) == .log(suppressed: 1, untracked: 0))
    }

    @Test func aFullTableTalliesWhatItCannotTrackAndForgetsQuietPairsFirst() {
        var log = RefusalLog(window: 60, capacity: 2)
        #expect(log.note(.origin, address: "a", now: 0) == .log(suppressed: 0, untracked: 0))
        #expect(log.note(.origin, address: "b", now: 10) == .log(suppressed: 0, untracked: 0))
        // Both logged within the minute: a third address is tallied, not logged, however many times.
        #expect(log.note(.origin, address: "c", now: 20) == .quiet)
        #expect(log.note(.origin, address: "d", now: 21) == .quiet)
        // "a"'s minute is over: its place goes to the next address, whose line tells of the two left out.
        #expect(log.note(.origin, address: "e", now: 61) == .log(suppressed: 0, untracked: 2))
        #expect(log.note(.origin, address: "f", now: 62) == .quiet)
        #expect(log.note(.origin, address: "b", now: 62) == .quiet, "b is still within its minute")
    }

    @Test func everyRefusalIsCountedByReasonAndLoggedOnceAMinuteWithItsSetting() {
        let refusals = Refusals()
        let lines = Lines()
        let logger = Logger(label: "test") { _ in lines }
        let refusal = Refusal(.webPerAddress, "400 web devices are connected from 10.0.0.7 already (capture.web_max_per_address)", retryAfter: 30)
        for second in 0..<150 {
            refusals.record(refusal, of: "a web device", from: "10.0.0.7", http: true, now: 1000 + Double(second) / 100, logger: logger)
        }
        refusals.record(Refusal(.deviceConnections, "the server has reached its limit"), of: "a device connection", from: "10.0.0.9", http: false,
                        now: 1001, logger: logger)
        refusals.record(refusal, of: "a web device", from: "10.0.0.7", http: true, now: 1070, logger: logger)
        #expect(lines.all == [
            "refused a web device from 10.0.0.7 with 429: 400 web devices are connected from 10.0.0.7 already (capture.web_max_per_address)",
            "refused a device connection from 10.0.0.9: the server has reached its limit",
            "refused a web device from 10.0.0.7 with 429: 400 web devices are connected from 10.0.0.7 already (capture.web_max_per_address); 149 more from this address since the last such line, not logged",
        ])
        let counts = refusals.counts()
        #expect(counts["web_per_address"] == 151)
        #expect(counts["device_connections"] == 1)
        #expect(counts["origin"] == 0, "every reason is there, refused or not")
        #expect(counts.count == RefusalReason.allCases.count)
    }
}

/// The messages a `Logger` wrote.
private final class Lines: LogHandler, @unchecked Sendable {
    private let lines = Mutex<[String]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    var all: [String] { lines.withLock { $0 } }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.withLock { $0.append(event.message.description) }
    }
}
