@testable import ConsoleServer
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import SessionCore
import SessionModel
import Testing

/// How the live stream turns the tail's lines into the page's messages.
@Suite struct LiveStreamTests {
    func event(_ id: Int64, view: String = "Posts") -> TailLine {
        let json = try! JSONSerialization.data(withJSONObject: ["class": "UserInterfaceEvent", "view": view])
        let payload = String(decoding: json, as: UTF8.self)
        return .event(StoredEvent(id: id, device: "d1", seq: id, eventClass: "UserInterfaceEvent", timestamp: Double(id),
                                  timestampEstimated: false, received: Double(id), payload: payload), session: 7)
    }

    func decode(_ messages: [ByteBuffer]) throws -> [[String: Any]] {
        try messages.map { try JSONSerialization.jsonObject(with: Data($0.readableBytesView)) as! [String: Any] }
    }

    @Test func oneCommitIsOneMessageAndWhatTheHelloCarriedIsLeftOut() throws {
        var last: Int64 = 2
        let messages = try decode(LiveStream.messages([event(1), event(2), event(3), event(4)], after: &last))
        #expect(messages.count == 1)
        #expect(messages[0]["type"] as? String == "events")
        let ids = (messages[0]["events"] as? [[String: Any]])?.compactMap { $0["id"] as? Int }
        #expect(ids == [3, 4])
        // The tail's words for an event, not a second summariser in the page.
        #expect((messages[0]["events"] as? [[String: Any]])?.first?["summary"] as? String == "view=Posts")
        #expect(last == 4)
    }

    @Test func markersAndSkipsSplitTheEventsInOrder() throws {
        var last: Int64 = 0
        let lines = [event(1), TailLine(kind: .skipped, time: 2, count: 40), event(42),
                     TailLine(kind: .deviceDisconnected, session: 7, time: 43, device: "d1", detail: "goodbye")]
        let messages = try decode(LiveStream.messages(lines, after: &last))
        #expect(messages.map { $0["type"] as? String } == ["events", "skipped", "events", "marker"])
        #expect(messages[1]["count"] as? Int == 40)
        #expect(messages[3]["kind"] as? String == "device-disconnected")
        #expect(messages[3]["detail"] as? String == "goodbye")
    }

    @Test func whatArrivesWithinABatchAfterAMessageGoesOutAsTheNextOne() async throws {
        let tail = LiveTail()
        let subscription = tail.subscribe(TailFilter(sessions: [7]), capacity: 100)
        // The event ids of each message sent.
        let sent = NIOLockedValueBox<[[Int]]>([])
        let forwarding = Task {
            // Long enough that the two commits below certainly fall within it.
            try await LiveStream.forward(subscription, after: 0, batch: .seconds(2)) { messages in
                let ids = try self.decode(messages).map { ($0["events"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } ?? [] }
                sent.withLockedValue { $0 += ids }
            }
        }
        defer { forwarding.cancel() }
        tail.publish([event(1)])
        try await waitUntil { sent.withLockedValue { $0.count } == 1 }
        // Two commits while the stream waits out its batch: one message, in order.
        tail.publish([event(2)])
        tail.publish([event(3), event(4)])
        try await waitUntil { sent.withLockedValue { $0.count } == 2 }
        #expect(sent.withLockedValue { $0 } == [[1], [2, 3, 4]])
    }

    /// Polls `condition` until it holds; fails after 30 s.
    func waitUntil(_ condition: @Sendable () -> Bool) async throws {
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while !condition() {
            guard ContinuousClock.now < deadline else { Issue.record("condition not met within 30 s"); return }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test func deviceStringsStayStrings() throws {
        var last: Int64 = 0
        let hostile = #"<script>window.__pwned=1</script>"}],"x":{ "#
        let messages = try decode(LiveStream.messages([event(1, view: hostile)], after: &last))
        let payload = ((messages[0]["events"] as? [[String: Any]])?.first?["payload"]) as? [String: Any]
        #expect(payload?["view"] as? String == hostile)
    }
}

@Suite struct SessionRatesTests {
    func record(_ id: Int64, events: Int64) -> SessionRecord {
        SessionRecord(id: id, uuid: "u\(id)", name: "s\(id)", created: 0, path: "/dev/null", events: events)
    }

    @Test func ratesAreTheGrowthPerSecondSinceTheLastSample() {
        let rates = SessionRates()
        #expect(rates.sample([record(1, events: 100)], now: 10).isEmpty)
        let second = rates.sample([record(1, events: 350), record(2, events: 5)], now: 12)
        #expect(second[1] == 125)
        #expect(second[2] == 0)
        #expect(rates.current == second)
    }
}
