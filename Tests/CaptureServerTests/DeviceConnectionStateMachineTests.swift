@testable import CaptureServer
import Foundation
import JournalStorage
import MuEvalWire
import Testing
import WireProtocol

/// The connection's decisions, without a socket: inputs in, actions out.
@Suite struct DeviceConnectionStateMachineTests {
    private typealias Machine = DeviceConnectionStateMachine

    private func opened() -> Machine {
        var machine = Machine()
        machine.opened(origin: 7, address: "10.0.0.5")
        return machine
    }

    @Test func acknowledgementsAreCoalescedToTheHighestDurableSeq() {
        var machine = opened()
        for seq in Int64(1)...5 { machine.appended(seq: seq) }
        #expect(machine.durable(seq: 3, writable: true) == 3)
        #expect(machine.durable(seq: 2, writable: true) == nil, "an older commit acknowledges nothing new")
        #expect(machine.durable(seq: 3, writable: true) == nil, "each seq is acknowledged once")
        // A device that does not read its replies: the newest ack waits, older ones are dropped.
        #expect(machine.durable(seq: 4, writable: false) == nil)
        #expect(machine.durable(seq: 5, writable: false) == nil)
        #expect(machine.becameWritable() == 5)
        #expect(machine.becameWritable() == nil)
    }

    @Test func filteredSeqsAreAcknowledgedOnceEverythingStoredBeforeThemIsDurable() {
        var machine = opened()
        #expect(machine.filtered(seq: 1, writable: true) == 1, "nothing pending: acknowledged on arrival")
        machine.appended(seq: 2)
        #expect(machine.filtered(seq: 3, writable: true) == nil, "seq 2 is not durable yet")
        #expect(machine.filtered(seq: 4, writable: true) == nil)
        #expect(machine.durable(seq: 2, writable: true) == 4, "the filtered seqs after 2 are dealt with too")
        #expect(machine.filtered(seq: nil, writable: true) == nil, "an event without seq is never acknowledged")
    }

    @Test func eventsThatFailedToStoreDoNotHoldUpLaterAcknowledgements() {
        var machine = opened()
        for seq in Int64(1)...3 { machine.appended(seq: seq) }
        machine.storageFailed(seqs: 1...3)
        #expect(machine.filtered(seq: 4, writable: true) == 4)
    }

    @Test func readsResumeOnlyWhenEveryReasonToHoldThemIsGone() {
        var machine = opened()
        #expect(machine.readRequested() == true)
        machine.hold(.journal)
        machine.hold(.partialBudget)
        #expect(machine.readRequested() == false, "held back")
        #expect(machine.release(.journal) == false, "the budget still holds reads")
        #expect(machine.release(.partialBudget) == true, "the held read goes out now")
        #expect(machine.release(.partialBudget) == false, "once")
        #expect(machine.readRequested() == true)
        // Released with no read held back: nothing to do.
        machine.hold(.journal)
        #expect(machine.release(.journal) == false)
    }

    @Test func aDeviceWithoutHelloIsKnownByItsAddressAndDetachedWhenItGoes() async throws {
        let temporary = try TemporaryRegistry()
        let session = try await temporary.start("nc")
        var machine = opened()
        guard case .attach(let device) = machine.eventReceived() else { Issue.record("no session yet"); return }
        #expect(device.id == "address:10.0.0.5")
        #expect(device.hello == nil)
        guard case .welcome(let welcomed) = machine.attachOutcome(.attached(session)) else { Issue.record("welcome"); return }
        #expect(welcomed === session)
        guard case .store(let into) = machine.eventReceived() else { Issue.record("store"); return }
        #expect(into === session)
        let closed = machine.closed()
        let detach = try #require(closed)
        #expect(detach.session === session)
        #expect(detach.device == "address:10.0.0.5")
        #expect(!detach.cleanly, "no goodbye: a gap")
        #expect(machine.origin == nil)
        await temporary.cleanUp()
    }

    @Test func goodbyeMakesTheDetachClean() async throws {
        let temporary = try TemporaryRegistry()
        let session = try await temporary.start("clean")
        var machine = opened()
        _ = machine.helloReceived(DeviceHello(deviceId: "iphone-1"))
        _ = machine.attachOutcome(.attached(session))
        machine.goodbyeReceived()
        let closed = machine.closed()
        let detach = try #require(closed)
        #expect(detach.device == "iphone-1")
        #expect(detach.cleanly)
        await temporary.cleanUp()
    }

    @Test func helloThenSessionRejectedIsLoggedOnceAndNamesTheReason() {
        var machine = opened()
        let hello = machine.helloReceived(DeviceHello(deviceId: "iphone-2"))
        #expect(hello == nil)
        #expect(machine.device.id == "iphone-2")
        guard case .rejected(let reason, let log) = machine.attachOutcome(.rejected(reason: "no session is waiting")) else {
            Issue.record("rejected"); return
        }
        #expect(reason == "no session is waiting")
        #expect(log)
        guard case .rejected(_, let logAgain) = machine.attachOutcome(.rejected(reason: "no session is waiting")) else {
            Issue.record("rejected"); return
        }
        #expect(!logAgain, "one log line, not one per event")
        #expect(machine.rejectionReason == "no session is waiting")
        guard case .attach = machine.eventReceived() else { Issue.record("events ask again"); return }
        let closed = machine.closed()
        #expect(closed == nil, "nothing to detach from")
    }

    @Test func aNewDeviceIdLeavesTheOldSessionFirst() async throws {
        let temporary = try TemporaryRegistry()
        let session = try await temporary.start("renamed")
        var machine = opened()
        _ = machine.attachOutcome(.attached(session))
        let renamed = machine.helloReceived(DeviceHello(deviceId: "iphone-3"))
        let detach = try #require(renamed)
        #expect(detach.device == "address:10.0.0.5")
        #expect(detach.cleanly)
        // The same id again keeps the session (no detach).
        _ = machine.attachOutcome(.attached(session))
        let again = machine.helloReceived(DeviceHello(deviceId: "iphone-3"))
        #expect(again == nil)
        await temporary.cleanUp()
    }

    @Test func whileASessionIsOpenedReadsAreHeldUntilItIsThere() async throws {
        let temporary = try TemporaryRegistry()
        let session = try await temporary.start("auto")
        var machine = opened()
        guard case .wait = machine.attachOutcome(.opening) else { Issue.record("wait"); return }
        #expect(machine.isWaitingForSession)
        #expect(machine.readRequested() == false)
        guard case .welcome = machine.sessionOpened(.attached(session)) else { Issue.record("welcome"); return }
        #expect(!machine.isWaitingForSession, "decoding goes on")
        #expect(machine.release(.session) == true, "then the held read")
        await temporary.cleanUp()
    }

    @Test func malformedMessagesAreLoggedInFullThenTalliedAndAFatalOneCloses() {
        var machine = opened()
        #expect(machine.malformed(fatal: false) == (.full, false))
        for _ in 2...Machine.malformedLoggedInFull { _ = machine.malformed(fatal: false) }
        #expect(machine.malformed(fatal: false).report == .none)
        for _ in (Machine.malformedLoggedInFull + 2)..<Machine.malformedTallyInterval { _ = machine.malformed(fatal: false) }
        #expect(machine.malformed(fatal: false).report == .tally(Machine.malformedTallyInterval))
        #expect(machine.malformed(fatal: true).close == true)
    }

    @Test func partialBytesAreReportedAsChanges() {
        var machine = opened()
        #expect(machine.partialBytesChanged(to: 100) == (0, 100))
        #expect(machine.partialBytesChanged(to: 40) == (100, 40))
        #expect(machine.partialBytes == 40)
    }
}
