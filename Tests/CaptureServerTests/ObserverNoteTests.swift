@testable import CaptureServer
@testable import SessionCore
import Foundation
import GroupCommit
import JournalStorage
import MuEvalWire
import SessionModel
import Testing
import WireProtocol

/// `SessionRegistry.addNote` on a real registry and real session files: where a note goes, at which
/// time, and what is refused. No sockets: device events enter the journal as a connection appends them.
@Suite struct ObserverNoteStorageTests {
    /// A device event with a device timestamp, appended and committed as a connection does.
    private func deviceEvent(_ session: EvaluationSession, device: String = "phone", timestamp: Double, received: Double) async throws {
        let payload = #"{"class":"UserInputEvent","type":"touch","x":1,"y":2}"#
        _ = session.journal.append([JournalRecord(device: device, received: received,
                                                  event: WireEvent(eventClass: "UserInputEvent", timestamp: timestamp, seq: nil,
                                                                   sensor: nil, payload: Array(payload.utf8), blobs: []),
                                                  origin: 1)])
        try await session.journal.flush()
    }

    /// A registry for the test, cleaned up whatever the test does.
    private func withLab(_ body: (TemporaryRegistry) async throws -> Void) async throws {
        let lab = try TemporaryRegistry()
        do {
            try await body(lab)
        } catch {
            await lab.cleanUp()
            throw error
        }
        await lab.cleanUp()
    }

    /// The event lines the subscription holds (everything published so far has been offered to it).
    private func events(_ subscription: TailSubscription, count: Int) async -> [StoredEvent] {
        var events: [StoredEvent] = []
        while events.count < count, let lines = await subscription.next() {
            events += lines.compactMap(\.event)
        }
        return events
    }

    @Test func aNoteInARecordingSessionIsOnTheDevicesClockInItsJournalAndInTheTail() async throws {
        try await withLab { lab in
            let session = try await lab.start("s", device: "phone")
            let subscription = lab.tail.subscribe(TailFilter(sessions: [session.id]), capacity: 100)
            defer { subscription.cancel() }
            // The device's clock is 10 s behind muevald's.
            try await deviceEvent(session, timestamp: 1_000, received: 1_010)

            let note = try await lab.registry.addNote("s", text: "looks for the Publish button", kind: "problem", source: "console",
                                                      observer: "jill", now: 2_000)
            #expect(note.eventClass == ObserverNote.eventClass)
            #expect(note.timestamp == 1_990 && !note.timestampEstimated && note.received == 2_000)
            #expect(note.device == "phone" && note.seq == nil)
            #expect(note.payload == #"{"class":"ObserverNote","text":"looks for the Publish button","kind":"problem","source":"console","observer":"jill"}"#)

            let tailed = await events(subscription, count: 2)
            #expect(tailed.map(\.eventClass) == ["UserInputEvent", "ObserverNote"])
            #expect(tailed.last == note)
            #expect(try SessionReader(path: session.journal.path).events().last == note)
            #expect(session.snapshot.events == 2)
        }
    }

    @Test func withoutAnyDeviceTimeANoteIsAtReceiveTimeAndEstimatedUnlessItsTimeIsGiven() async throws {
        try await withLab { lab in
            let session = try await lab.start("waiting")

            let now = try await lab.registry.addNote(String(session.id), text: "tester reads the task sheet", source: "muevalctl", now: 500)
            #expect(now.timestamp == 500 && now.timestampEstimated && now.device == ObserverNote.device)
            #expect(try TypedJSON.decodeLeavingBlobs(Array(now.payload.utf8))["kind"]?.string == "note")

            let replayed = try await lab.registry.addNote("waiting", text: "here", kind: "quote", source: "console", at: 123.25, now: 600)
            #expect(replayed.timestamp == 123.25 && !replayed.timestampEstimated && replayed.received == 600)
        }
    }

    @Test func notesAtAGivenTimeDoNotMoveTheDevicesClockOffset() async throws {
        try await withLab { lab in
            let session = try await lab.start("s", device: "phone")
            try await deviceEvent(session, timestamp: 1_000, received: 1_010)
            _ = try await lab.registry.addNote("s", text: "back to the start", kind: "task-done", source: "console", at: 5, now: 2_000)
            let later = try await lab.registry.addNote("s", text: "later", source: "console", now: 3_000)
            #expect(later.timestamp == 2_990)
            // A device event with no timestamp leaves the offset alone too.
            _ = session.journal.append([JournalRecord(device: "phone", received: 3_500, event: WireEvent(
                eventClass: "CustomEvent", timestamp: nil, seq: nil, sensor: nil, payload: Array(#"{"class":"CustomEvent"}"#.utf8), blobs: []),
                origin: 1)])
            try await session.journal.flush()
            #expect(try await lab.registry.addNote("s", text: "still", source: "console", now: 4_000).timestamp == 3_990)
        }
    }

    @Test func aStoppedSessionsFileTakesTheNoteKeepsItsIndexesAndTheCatalogCountsIt() async throws {
        try await withLab { lab in
            let session = try await lab.start("replayed", device: "phone")
            let subscription = lab.tail.subscribe(TailFilter(sessions: [session.id]), capacity: 100)
            defer { subscription.cancel() }
            try await deviceEvent(session, timestamp: 1_000, received: 1_030)
            let stopped = try await lab.registry.stop("replayed", now: 1_100)
            #expect(stopped.events == 1)

            let note = try await lab.registry.addNote("replayed", text: "the tester gave up here", kind: "problem", source: "console",
                                                      at: 1_000.5, now: 9_000)
            #expect(note.timestamp == 1_000.5 && !note.timestampEstimated && note.device == "phone")
            // Without a position, now on the device's clock, from the file's last device event.
            let unplaced = try await lab.registry.addNote("replayed", text: "afterwards", source: "muevalctl", now: 9_100)
            #expect(unplaced.timestamp == 9_070 && !unplaced.timestampEstimated)

            let reader = try SessionReader(path: stopped.path)
            #expect(try reader.events().suffix(2) == [note, unplaced])
            #expect(try reader.events(classes: [ObserverNote.eventClass]).map(\.id) == [note.id, unplaced.id])
            #expect(try lab.registry.find("replayed").events == 3)
            #expect(try lab.registry.find("replayed").state == .stopped)
            let indexes = try SQLiteDatabase(path: stopped.path, readOnly: true)
                .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' ORDER BY name")
            var names: [String] = []
            try indexes.forEachRow { names.append($0.string(0) ?? "") }
            #expect(names == ["events_class", "events_device_seq", "events_received", "events_timestamp"])
            #expect(await events(subscription, count: 3).map(\.id).suffix(2) == [note.id, unplaced.id])
        }
    }

    @Test func badNotesAndUnknownSessionsAreRefusedAndStoreNothing() async throws {
        try await withLab { lab in
            let session = try await lab.start("s")
            await #expect(throws: ObserverNoteError.emptyText) {
                try await lab.registry.addNote("s", text: "  ", source: "console", now: 1)
            }
            await #expect(throws: ObserverNoteError.badKind("a\tb", "it contains control characters")) {
                try await lab.registry.addNote("s", text: "x", kind: "a\tb", source: "console", now: 1)
            }
            await #expect(throws: ObserverNoteError.unknownSource("web")) {
                try await lab.registry.addNote("s", text: "x", source: "web", now: 1)
            }
            await #expect(throws: ObserverNoteError.self) {
                try await lab.registry.addNote("s", text: "x", source: "console", at: .nan, now: 1)
            }
            await #expect(throws: SessionError.notFound("nope")) {
                try await lab.registry.addNote("nope", text: "x", source: "console", now: 1)
            }
            try await session.journal.flush()
            #expect(try SessionReader(path: session.journal.path).eventCount() == 0)
        }
    }
}
