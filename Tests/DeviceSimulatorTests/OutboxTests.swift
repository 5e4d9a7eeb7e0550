@testable import DeviceSimulator
import WireProtocol
import XCTest

/// The sender's buffer: what is acknowledged leaves it, what is not goes out again after a reconnect.
final class OutboxTests: XCTestCase {
    private func event(_ seq: Int64, _ eventClass: EventClass = .userInput, sensor: String? = nil) -> OutgoingEvent {
        OutgoingEvent(seq: seq, eventClass: eventClass, sensor: sensor, time: Double(seq), bytes: [UInt8(seq)])
    }

    func testUnacknowledgedEventsAreWrittenAgainAfterAReconnect() {
        var outbox = Outbox(capacity: 4)
        for seq: Int64 in 1...4 { outbox.append(event(seq)) }
        XCTAssertFalse(outbox.hasRoom)
        let first = outbox.takeUnwritten()
        XCTAssertEqual(first.events.map(\.seq), [1, 2, 3, 4])
        XCTAssertEqual(first.resent, 0)
        XCTAssertEqual(outbox.acknowledge(through: 2), 2)
        XCTAssertTrue(outbox.hasRoom)
        outbox.append(event(5))

        outbox.connectionLost()
        // An ack of the old connection cannot settle anything once it is gone.
        XCTAssertEqual(outbox.acknowledge(through: 5), 0)
        let again = outbox.takeUnwritten()
        XCTAssertEqual(again.events.map(\.seq), [3, 4, 5])
        XCTAssertEqual(again.resent, 2)
        XCTAssertTrue(outbox.reject(4))
        XCTAssertFalse(outbox.reject(4))
        XCTAssertEqual(outbox.acknowledge(through: 5), 2)
        XCTAssertEqual(outbox.count, 0)
    }

    func testEventsTheSessionDoesNotSelectAreNotAwaited() {
        var outbox = Outbox(capacity: 10)
        outbox.append(event(1, .userInput))
        outbox.append(event(2, .deviceSensor, sensor: "battery"))
        outbox.append(event(3, .deviceSensor, sensor: "accelerometer"))
        _ = outbox.takeUnwritten()
        let everything = outbox.unsettled(selectedBy: Welcome(sessionId: "1", sensors: []))
        XCTAssertEqual(everything.awaited, 3)
        let some = outbox.unsettled(selectedBy: Welcome(sessionId: "1", sensors: ["UserInputEvent", "battery"]))
        XCTAssertEqual(some.awaited, 2)
        XCTAssertEqual(some.notSelected, 1)
    }
}
