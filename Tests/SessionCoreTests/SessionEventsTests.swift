@testable import SessionCore
import Foundation
import GroupCommit
import JournalStorage
import Logging
import SessionModel
import Testing

/// The one stream of lifecycle events: bounded per subscriber, in order, and what the registry publishes on it.
@Suite struct SessionEventsTests {
    private func record(_ id: Int64) -> SessionRecord {
        SessionRecord(id: id, uuid: "u\(id)", name: "s\(id)", created: 100, path: "/tmp/s\(id).mueval")
    }

    @Test func everySubscriberGetsTheEventsInTheOrderTheyHappened() async throws {
        let hub = SessionEvents()
        let first = hub.subscribe()
        let second = hub.subscribe()
        hub.publish([.started(record(1)), .stopping(record(1))])
        hub.publish([.stopped(record(1))])
        for subscription in [first, second] {
            #expect(await subscription.next() == [.started(record(1)), .stopping(record(1)), .stopped(record(1))])
        }
        #expect(hub.subscribers == 2)
    }

    @Test func aSubscriberThatFallsBehindIsToldHowManyEventsWereDroppedWhereTheyWere() async throws {
        let hub = SessionEvents(capacity: 2)
        let slow = hub.subscribe()
        hub.publish((1...5).map { .started(record($0)) })
        #expect(await slow.next() == [.started(record(1)), .started(record(2)), .missed(3)], "the gap at the end")
        hub.publish([.started(record(6)), .started(record(7)), .started(record(8)), .started(record(9))])
        #expect(await slow.next() == [.started(record(6)), .started(record(7)), .missed(2)])
        hub.publish([.deleted(record(10))])
        #expect(await slow.next() == [.deleted(record(10))], "room again: nothing more is lost")
    }

    @Test func aSubscriptionEndsWhenCancelledOrWhenTheHubFinishesAndLeavesIt() async throws {
        let hub = SessionEvents()
        let cancelled = hub.subscribe()
        cancelled.cancel()
        #expect(await cancelled.next() == nil)
        #expect(hub.subscribers == 0)
        let following = hub.subscribe()
        hub.publish([.started(record(1))])
        hub.finish()
        var received: [SessionEvent] = []
        for await event in following { received.append(event) }
        #expect(received == [.started(record(1))], "what was buffered is delivered first")
        #expect(await hub.subscribe().next() == nil, "a subscription after the end ends at once")
    }

    @Test func droppingASubscriptionLeavesTheHub() {
        let hub = SessionEvents()
        do { _ = hub.subscribe() }
        #expect(hub.subscribers == 0)
    }

    @Test func theRegistryAnnouncesAStartedAndStoppedSessionAndEndsTheStreamAtShutdown() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-core-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let registry = SessionRegistry(catalog: try Catalog(directory: directory), policy: .reject, journalLimits: JournalWriterLimits(),
                                       counters: CaptureCounters(), tail: LiveTail(), logger: Logger(label: "test")) { _, _ in }
        let events = registry.events.subscribe()
        let started = try await registry.start(name: "s", testUser: nil, notes: nil, sensors: [], device: nil, now: 1_000)
        let stopped = try await registry.stop("s", now: 2_000)
        _ = try registry.delete("s")
        await registry.shutdown()
        var received: [SessionEvent] = []
        for await event in events { received.append(event) }
        var stopping = started
        stopping.state = .stopped
        stopping.stopped = 2_000
        #expect(received == [.started(started), .stopping(stopping), .stopped(stopped), .deleted(stopped)])
    }
}
