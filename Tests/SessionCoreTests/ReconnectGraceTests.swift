import Dispatch
@testable import SessionCore
import MuEvalWire
import SessionModel
import Testing

/// A device keeps its session across drops (issue 52): the reconnect grace of an automatic session and the
/// floor a session stopped for its device's drop leaves for the device's next one, decided without disk,
/// sockets or clocks (docs/SESSION-CORE.md, "Drops").
@Suite struct ReconnectGraceTests {
    typealias Machine = SessionLifecycleStateMachine
    typealias Action = Machine.Action

    private func record(_ id: Int64, bound: String? = "phone") -> SessionRecord {
        SessionRecord(id: id, uuid: "u\(id)", name: "auto-\(id)", boundDevice: bound, state: .waiting, created: 100, path: "/tmp/s\(id).mueval")
    }

    private func phone(_ id: String = "phone") -> ConnectingDevice {
        ConnectingDevice(id: id, hello: DeviceHello(deviceId: id), address: "10.0.0.5")
    }

    /// Policy `auto` with a grace of 120 s, and the phone's automatic session 3 recording on connection 1.
    private func recording(grace: Double = 120) -> Machine {
        var machine = Machine(policy: .auto, makePairingCode: { "777777" })
        machine.reconnectGrace = grace
        _ = machine.automaticSessionOpened(record(3), for: phone(), connection: 1, now: 1_000)
        return machine
    }

    private func attach(_ machine: inout Machine, connection: UInt64, now: Double) -> [Action] {
        machine.attach(phone(), connection: connection, deviceToken: nil, limits: PairingLimits(), now: now)
    }

    private func stops(_ actions: [Action]) -> Bool {
        actions.contains { if case .stop = $0 { true } else { false } }
    }

    private func writes(_ actions: [Action]) -> [Machine.Write?] {
        actions.compactMap { if case .update(_, let write) = $0 { write } else { nil } }
    }

    private func logs(_ actions: [Action]) -> [String] {
        actions.compactMap { if case .log(_, let line) = $0 { line } else { nil } }
    }

    @Test func aDroppedAutomaticSessionWaitsOutItsGraceInterruptedWithAGap() {
        var machine = recording()
        let dropped = machine.detached(3, connection: 1, device: "phone", cleanly: false, now: 1_100)
        #expect(!stops(dropped), "it may come back")
        #expect(dropped.last == .startReconnectGrace(3, timer: 1, seconds: 120))
        #expect(machine.open[3]?.record.state == .interrupted)
        #expect(machine.open[3]?.graceTimer == 1)
        #expect(writes(dropped).first??.gap == .open(at: 1_100, reason: "device phone disconnected without goodbye"), "noted as any session's drop")
        #expect(logs(dropped) == ["session 3 interrupted: device phone disconnected; it stops unless the device reconnects within 120 s (capture.reconnect_grace)"])
        #expect(machine.sessionsAwaitingReconnect() == [3])
    }

    /// The soak of issue 52: a phone's old socket died in silence (muevald has not noticed yet), it reconnected,
    /// resent and said goodbye on the new one. The goodbye stops its session then, not after the old socket's
    /// death is noticed and a grace waited out.
    @Test func aGoodbyeStopsTheSessionWhileAnUnnoticedDeadConnectionIsStillOpen() {
        var machine = recording()
        _ = attach(&machine, connection: 2, now: 1_050)
        let goodbye = machine.detached(3, connection: 2, device: "phone", cleanly: true, now: 1_060)
        #expect(stops(goodbye))
    }

    @Test func aConnectionLostWhileAnotherOfTheDeviceRecordsChangesNothing() {
        var machine = recording()
        _ = attach(&machine, connection: 2, now: 1_050)
        let lost = machine.detached(3, connection: 1, device: "phone", cleanly: false, now: 1_060)
        #expect(!stops(lost))
        #expect(machine.open[3]?.record.state != .interrupted)
        #expect(machine.open[3]?.graceTimer == nil)
    }

    @Test func theDeviceBackWithinTheGraceRecordsIntoItsSessionAndItsTimerIsCancelled() throws {
        var machine = recording()
        _ = machine.detached(3, connection: 1, device: "phone", cleanly: false, now: 1_100)
        let back = attach(&machine, connection: 2, now: 1_130)
        #expect(back.contains(.attached(3)), "the same session, not a new one")
        #expect(back.first == .cancelReconnectGrace(3))
        #expect(writes(back).first??.gap == .close(at: 1_130), "the gap closes as any session's does")
        #expect(machine.open[3]?.record.state == .recording)
        #expect(machine.open[3]?.graceTimer == nil)
        #expect(machine.reconnectGraceEnded(3, timer: 1, now: 1_220).isEmpty, "a timer that fires anyway stops nothing")
        #expect(machine.sessionsAwaitingReconnect().isEmpty)
    }

    @Test func theGraceRunningOutStopsTheSessionAndLeavesItsDeviceAFloor() {
        var machine = recording()
        _ = machine.detached(3, connection: 1, device: "phone", cleanly: false, now: 1_100)
        // The timer is the clock: when it fires, the grace is over.
        let ended = machine.reconnectGraceEnded(3, timer: 1, now: 1_220)
        #expect(Array(ended.suffix(2)) == [.rememberResendFloor(3, device: "phone"), .stop(3, now: 1_220)])
        #expect(logs(ended) == ["session 3 (auto-3): device phone did not reconnect within 120 s (capture.reconnect_grace): stopped"])
        #expect(machine.resendFloors == ["phone": 3])
    }

    @Test func aTimerOfAnEarlierDropStopsNothing() {
        var machine = recording()
        _ = machine.detached(3, connection: 1, device: "phone", cleanly: false, now: 1_100)
        _ = attach(&machine, connection: 2, now: 1_110)
        let second = machine.detached(3, connection: 2, device: "phone", cleanly: false, now: 1_150)
        #expect(second.last == .startReconnectGrace(3, timer: 2, seconds: 120))
        #expect(machine.reconnectGraceEnded(3, timer: 1, now: 1_220).isEmpty, "the first drop's timer, late")
        #expect(machine.reconnectGraceEnded(3, timer: 2, now: 1_270).last == .stop(3, now: 1_270))
    }

    @Test func aGoodbyeStopsTheAutomaticSessionAtOnceAndLeavesNoFloor() {
        var machine = recording()
        let goodbye = machine.detached(3, connection: 1, device: "phone", cleanly: true, now: 1_100)
        #expect(goodbye.last == .stop(3, now: 1_100))
        #expect(!goodbye.contains { if case .startReconnectGrace = $0 { true } else { false } })
        #expect(!goodbye.contains(.rememberResendFloor(3, device: "phone")))
        #expect(machine.resendFloors.isEmpty)
    }

    @Test func withoutAGraceADropStopsAtOnceAsBeforeAndLeavesAFloor() {
        var machine = recording(grace: 0)
        let dropped = machine.detached(3, connection: 1, device: "phone", cleanly: false, now: 1_100)
        #expect(Array(dropped.suffix(2)) == [.rememberResendFloor(3, device: "phone"), .stop(3, now: 1_100)])
        #expect(writes(dropped).allSatisfy { $0 == nil }, "nothing persisted before the stop")
    }

    @Test func theDevicesNextSessionTakesTheFloorOnce() throws {
        var machine = recording()
        _ = machine.detached(3, connection: 1, device: "phone", cleanly: false, now: 1_100)
        _ = machine.reconnectGraceEnded(3, timer: 1, now: 1_220)
        let stopping = try machine.stopRequested(3, now: 1_220).get()
        #expect(stopping.contains(.cancelReconnectGrace(3)), "the timer that fired is let go")
        #expect(attach(&machine, connection: 2, now: 1_300).last == .openAutomaticSession, "no open session: a new one")
        let opened = machine.automaticSessionOpened(record(4), for: phone(), connection: 2, now: 1_301)
        #expect(opened.contains(.applyResendFloor(4, device: "phone")))
        #expect(machine.resendFloors.isEmpty)
        #expect(!attach(&machine, connection: 5, now: 1_310).contains { if case .applyResendFloor = $0 { true } else { false } },
                "a second connection: the floor is the file's already")
    }

    @Test func theDeviceBackInTheSessionStoppingForItsDropTakesNoFloorThere() {
        var machine = recording()
        _ = machine.detached(3, connection: 1, device: "phone", cleanly: false, now: 1_100)
        _ = machine.reconnectGraceEnded(3, timer: 1, now: 1_220)
        // Before the stop gets to it: the device is back in session 3, which stores each seq once by itself.
        let back = attach(&machine, connection: 2, now: 1_220.5)
        #expect(back.contains(.attached(3)))
        #expect(!back.contains { if case .applyResendFloor = $0 { true } else { false } })
        #expect(machine.resendFloors == ["phone": 3], "its next session gets it")
    }

    @Test func aDeveloperStopDuringTheGraceCancelsItsTimerAndLeavesNoFloor() throws {
        var machine = recording()
        _ = machine.detached(3, connection: 1, device: "phone", cleanly: false, now: 1_100)
        let stopped = try machine.stopRequested(3, now: 1_150).get()
        #expect(stopped.contains(.cancelReconnectGrace(3)))
        #expect(!stopped.contains(.rememberResendFloor(3, device: "phone")))
        #expect(machine.reconnectGraceEnded(3, timer: 1, now: 1_220).isEmpty)
        #expect(machine.resendFloors.isEmpty)
    }

    @Test func onlyAnAutomaticSessionsLastConnectionStartsAGrace() {
        var machine = recording()
        _ = attach(&machine, connection: 2, now: 1_010)
        let one = machine.detached(3, connection: 1, device: "phone", cleanly: false, now: 1_100)
        #expect(!one.contains { if case .startReconnectGrace = $0 { true } else { false } }, "connection 2 still records")
        // A developer's session is interrupted and waits, as before: no timer stops it.
        var developer = Machine(policy: .auto, makePairingCode: { "777777" })
        developer.reconnectGrace = 120
        _ = developer.started(record(1, bound: nil), now: 900)
        _ = attach(&developer, connection: 1, now: 1_000)
        let lost = developer.detached(1, connection: 1, device: "phone", cleanly: false, now: 1_100)
        #expect(!lost.contains { if case .startReconnectGrace = $0 { true } else { false } })
        #expect(logs(lost) == ["session 1 interrupted: device phone disconnected"])
        #expect(developer.sessionsAwaitingReconnect().isEmpty)
    }

    @Test func aFloorIsWhatTheStopSettledFirstAndItsWaitEndsWithTheSettlement() {
        let floor = ResendFloor(session: 3)
        DispatchQueue.global().async { floor.settle(42) }
        #expect(floor.wait() == 42, "the next session's journal waits for the stop")
        floor.settle(nil)
        #expect(floor.wait() == 42, "a stop that fails after settling changes nothing")
    }
}
