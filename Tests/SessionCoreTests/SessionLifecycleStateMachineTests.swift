@testable import SessionCore
import MuEvalWire
import SessionModel
import Testing

/// The open sessions' decisions without disk or sockets: inputs in, actions out. One test per
/// transition; the names read as the specification (docs/SESSION-CORE.md).
@Suite struct SessionLifecycleStateMachineTests {
    typealias Machine = SessionLifecycleStateMachine
    typealias Action = Machine.Action

    static let newCode = "777777"

    func machine(_ policy: UnknownDevicePolicy = .reject) -> Machine {
        Machine(policy: policy, makePairingCode: { Self.newCode })
    }

    func record(_ id: Int64, bound: String? = nil, device: String? = nil, state: SessionState = .waiting,
                        code: String? = nil, started: Double? = nil) -> SessionRecord {
        SessionRecord(id: id, uuid: "u\(id)", name: "s\(id)", boundDevice: bound, device: device, state: state, created: 100,
                      started: started, path: "/tmp/s\(id).mueval", pairingCode: code)
    }

    func phone(_ id: String = "phone", pairing: String? = nil, token: String? = nil, invitation: String? = nil,
                       address: String = "10.0.0.5") -> ConnectingDevice {
        ConnectingDevice(id: id, hello: DeviceHello(deviceId: id, device: DeviceDescription(name: "Ann's", model: "iPhone3,1"),
                                                    token: token, pairing: pairing, invitation: invitation), address: address)
    }

    /// A machine with these sessions open (started by a developer).
    func open(_ records: SessionRecord..., policy: UnknownDevicePolicy = .reject) -> Machine {
        var machine = machine(policy)
        for record in records { _ = machine.started(record, now: 100) }
        return machine
    }

    func attach(_ machine: inout Machine, _ device: ConnectingDevice, connection: UInt64 = 1, deviceToken: String? = nil,
                        limits: PairingLimits = PairingLimits(), now: Double = 1_000) -> [Action] {
        machine.attach(device, connection: connection, deviceToken: deviceToken, limits: limits, now: now)
    }

    func events(_ actions: [Action]) -> [SessionEvent] {
        actions.compactMap { if case .publish(let event) = $0 { event } else { nil } }
    }

    func logs(_ actions: [Action]) -> [String] {
        actions.compactMap { if case .log(_, let line) = $0 { line } else { nil } }
    }

    func writes(_ actions: [Action]) -> [(SessionRecord, Machine.Write?)] {
        actions.compactMap { if case .update(let record, let write) = $0 { (record, write) } else { nil } }
    }

    func attached(_ actions: [Action]) -> Int64? {
        actions.compactMap { if case .attached(let id) = $0 { id } else { nil } }.last
    }

    func rejection(_ actions: [Action]) -> (reason: String, logged: Bool)? {
        actions.compactMap { action -> (reason: String, logged: Bool)? in
            if case .reject(let reason, let logged) = action { (reason, logged) } else { nil }
        }.last
    }

    // MARK: Start, recovery, stop, import, delete

    @Test func aStartForADeviceThatRecordsIntoAnOpenSessionIsRefused() {
        var machine = open(record(1, bound: "phone"))
        #expect(machine.startRequested(device: "phone") == .deviceBusy(device: "phone", session: 1))
        #expect(machine.startRequested(device: "tablet") == nil)
        #expect(machine.startRequested(device: nil) == nil, "a session for the next device never clashes")
        _ = attach(&machine, phone("tablet"))
        #expect(machine.startRequested(device: "tablet") == nil, "bound to phone: the tablet claimed nothing")
    }

    @Test func aStartedSessionIsOpenAnnouncedShownInTheTailAndLogged() {
        var machine = machine()
        let started = record(1, bound: "phone")
        let actions = machine.started(started, now: 100)
        #expect(machine.open[1] == .init(record: started, isAutomatic: false))
        #expect(events(actions) == [.started(started)])
        #expect(actions.contains { if case .tail(let line) = $0 { line.kind == .sessionStarted && line.session == 1 } else { false } })
        #expect(logs(actions) == ["session 1 (s1) started, waiting for device phone"])
    }

    @Test func aSessionThatWasRecordingIsRecoveredInterruptedWithAGapFromItsLastEvent() throws {
        var machine = machine()
        let actions = machine.recovered(record(1, device: "phone", state: .recording, started: 150), lastEvent: 180)
        #expect(machine.open[1]?.record.state == .interrupted)
        let (updated, write) = try #require(writes(actions).first)
        #expect(updated.state == .interrupted)
        #expect(write == Machine.Write(gap: .open(at: 180, reason: "muevald was not running")))
        #expect(logs(actions).first?.contains("interrupted until device phone reconnects") == true)
        // Without events the gap starts when the device first connected.
        #expect(writes(machine.recovered(record(2, device: "phone", state: .recording, started: 150), lastEvent: nil)).first?.1?.gap
                == .open(at: 150, reason: "muevald was not running"))
    }

    @Test func aSessionThatWasNotRecordingIsRecoveredAsItWas() {
        var machine = machine()
        let actions = machine.recovered(record(1, state: .waiting), lastEvent: nil)
        #expect(machine.open[1]?.record.state == .waiting)
        #expect(writes(actions).isEmpty)
        #expect(logs(actions) == ["session 1 (s1) is waiting again"])
    }

    @Test func aStopClosesTheSessionAtOnceAndAnnouncesThatItIsStopping() throws {
        var machine = open(record(1))
        let actions = try machine.stopRequested(1, now: 500).get()
        #expect(machine.open.isEmpty)
        let (stopping, write) = try #require(writes(actions).first)
        #expect(stopping.state == .stopped && stopping.stopped == 500)
        #expect(write == nil, "the registry finalises the file itself")
        #expect(events(actions) == [.stopping(stopping)])
        #expect(machine.stopRequested(1, now: 501) == .failure(.alreadyStopped(1)), "a second stop is refused")
    }

    @Test func aFinishedStopIsAnnouncedWithItsFinalCounts() {
        var final = record(1, state: .stopped)
        final.events = 42
        let actions = machine().stopFinished(final, now: 500)
        #expect(events(actions) == [.stopped(final)])
        #expect(logs(actions) == ["session 1 (s1) stopped: 42 events stored"])
        #expect(actions.contains { if case .tail(let line) = $0 { line.kind == .sessionStopped && line.detail == "42 events stored" } else { false } })
    }

    @Test func anImportedSessionIsAnnouncedLikeAStoppedOne() {
        let imported = record(9, state: .stopped)
        let actions = machine().imported(imported, from: "field.imut", now: 500)
        #expect(events(actions) == [.imported(imported, file: "field.imut")])
        #expect(actions.contains { if case .tail(let line) = $0 { line.kind == .sessionStopped } else { false } })
    }

    @Test func onlyAStoppedSessionMayBeDeletedAndItsDeletionIsAnnounced() {
        let machine = open(record(1))
        #expect(machine.deleteRequested(1) == .stillRecording(1))
        #expect(machine.deleteRequested(2) == nil)
        let deleted = record(2, state: .stopped)
        #expect(events(machine.deleted(deleted)) == [.deleted(deleted)])
    }

    @Test func shutdownClosesEveryOpenSession() {
        var machine = open(record(2), record(1))
        #expect(machine.shutdown() == [1, 2])
        #expect(machine.open.isEmpty)
    }

    // MARK: Claim

    @Test func withADeviceTokenADeviceWithoutTheRightOneIsRejected() {
        var machine = open(record(1))
        let missing = attach(&machine, phone(), deviceToken: "secret")
        #expect(missing.first == .count(.authenticationFailure))
        #expect(rejection(missing)?.reason == "this server needs a device token: send it in <hello> as <key>token</key>")
        #expect(rejection(attach(&machine, phone(token: "guess"), deviceToken: "secret"))?.reason == "the token in <hello> is not this server's device token")
        #expect(attached(attach(&machine, phone(token: "secret"), deviceToken: "secret")) == 1)
    }

    @Test func aDeviceClaimsTheOldestSessionWaitingForAnyDevice() {
        var machine = open(record(2), record(1))
        let actions = attach(&machine, phone())
        #expect(attached(actions) == 1)
        #expect(machine.open[1]?.record.device == "phone")
        #expect(logs(actions).first == "device phone claimed session 1")
        #expect(attached(attach(&machine, phone("tablet"), connection: 2)) == 2, "the next device takes the next one")
    }

    @Test func aDeviceRecordsIntoTheSessionBoundToItBeforeAFreeOne() {
        var machine = open(record(1), record(2, bound: "phone"))
        let actions = attach(&machine, phone())
        #expect(attached(actions) == 2)
        #expect(!logs(actions).contains { $0.contains("claimed") }, "bound, not claimed")
        #expect(machine.open[1]?.record.device == nil)
    }

    @Test func aReturningDeviceRecordsIntoTheSessionItRecordedInto() {
        var machine = open(record(1), record(2))
        _ = attach(&machine, phone(), connection: 1)
        _ = machine.detached(1, connection: 1, device: "phone", cleanly: false, now: 1_100)
        #expect(attached(attach(&machine, phone(), connection: 2)) == 1)
    }

    @Test func aSessionBoundToAnotherDeviceOrOpenedAutomaticallyIsNotClaimed() {
        var machine = open(record(1, bound: "tablet"), policy: .reject)
        #expect(rejection(attach(&machine, phone()))?.reason == "no session is waiting for device phone: start one with `muevalctl start`")
        var automatic = self.machine(.auto)
        _ = automatic.automaticSessionOpened(record(5, bound: "other"), for: phone("other"), connection: 9, now: 900)
        #expect(attach(&automatic, phone()).last == .openAutomaticSession)
    }

    @Test func attachingRecordsTheDeviceClosesTheGapAndLogsOnlyWhenRecordingBegins() throws {
        var machine = open(record(1))
        let first = attach(&machine, phone(), connection: 1, now: 1_000)
        let (updated, write) = try #require(writes(first).first)
        #expect(updated.state == .recording && updated.device == "phone" && updated.started == 1_000)
        #expect(write?.gap == .close(at: 1_000))
        #expect(write?.device?.id == "phone" && write?.device?.model == "iPhone3,1" && write?.device?.address == "10.0.0.5")
        #expect(logs(first).contains("session 1 recording from device phone"))
        #expect(events(first) == [.deviceAttached(updated, device: try #require(write?.device))])
        #expect(first.contains { if case .tail(let line) = $0 { line.detail == "Ann's, iPhone3,1, 10.0.0.5" } else { false } })
        let second = attach(&machine, phone(), connection: 2, now: 1_200)
        #expect(!logs(second).contains { $0.contains("recording from") }, "already recording")
        #expect(writes(second).first?.0.started == 1_000, "the first connection's start stays")
        #expect(machine.open[1]?.connections == [1, 2])
    }

    // MARK: Policy auto

    @Test func underPolicyAutoADeviceWithoutASessionGetsOneOpened() {
        var machine = open(record(1, bound: "tablet"), policy: .auto)
        #expect(attach(&machine, phone()).last == .openAutomaticSession)
    }

    @Test func anAutomaticSessionDueFindsTheOneAnotherConnectionOpenedMeanwhile() {
        var machine = machine(.auto)
        #expect(machine.automaticSessionDue(for: phone(), connection: 1, now: 1_000) == nil, "none yet: open one")
        _ = machine.automaticSessionOpened(record(3, bound: "phone"), for: phone(), connection: 1, now: 1_000)
        #expect(attached(machine.automaticSessionDue(for: phone(), connection: 2, now: 1_001) ?? []) == 3)
    }

    @Test func anAutomaticSessionOpenedIsAnnouncedAndRecordsAtOnce() throws {
        var machine = machine(.auto)
        let opened = record(3, bound: "phone")
        let actions = machine.automaticSessionOpened(opened, for: phone(), connection: 1, now: 1_000)
        #expect(machine.open[3]?.isAutomatic == true)
        #expect(events(actions).first == .started(opened))
        #expect(logs(actions).first == "device phone has no session: opened session 3 (policy auto)")
        #expect(attached(actions) == 3)
    }

    @Test func anAutomaticSessionThatCannotBeOpenedRejectsTheDevice() {
        let actions = machine(.auto).automaticSessionFailed(for: phone(), error: "disk full")
        #expect(logs(actions) == ["cannot open a session for device phone: disk full"])
        #expect(rejection(actions)?.reason == "the server cannot open a session: disk full")
    }

    // MARK: Detach

    @Test func aConnectionThatWasNotTheLastLeavesTheSessionRecording() {
        var machine = open(record(1))
        _ = attach(&machine, phone(), connection: 1)
        _ = attach(&machine, phone(), connection: 2)
        let actions = machine.detached(1, connection: 1, device: "phone", cleanly: true, now: 1_100)
        #expect(machine.open[1]?.record.state == .recording)
        #expect(writes(actions).isEmpty)
        #expect(events(actions).map { if case .deviceDetached(_, let device, let cleanly) = $0 { "\(device) \(cleanly)" } else { "" } } == ["phone true"])
        #expect(actions.first == .tailAfterCommits(TailLine(kind: .deviceDisconnected, session: 1, time: 1_100, device: "phone", detail: "said goodbye")))
    }

    @Test func theLastConnectionGoneInterruptsTheSessionWithAGapUnlessItSaidGoodbye() throws {
        var machine = open(record(1), record(2))
        _ = attach(&machine, phone(), connection: 1)
        _ = attach(&machine, phone("tablet"), connection: 2)
        let lost = machine.detached(1, connection: 1, device: "phone", cleanly: false, now: 1_100)
        let (interrupted, write) = try #require(writes(lost).first)
        #expect(interrupted.state == .interrupted)
        #expect(write?.gap == .open(at: 1_100, reason: "device phone disconnected without goodbye"))
        #expect(write?.device == DeviceRecord(id: "phone", firstSeen: 1_100, lastSeen: 1_100))
        #expect(logs(lost) == ["session 1 interrupted: device phone disconnected"])
        let goodbye = machine.detached(2, connection: 2, device: "tablet", cleanly: true, now: 1_200)
        #expect(writes(goodbye).first?.1?.gap == nil)
        #expect(logs(goodbye) == ["session 2 interrupted: device tablet said goodbye"])
    }

    @Test func theLastConnectionOfAnAutomaticSessionGoneStopsIt() {
        var machine = machine(.auto)
        _ = machine.automaticSessionOpened(record(3, bound: "phone"), for: phone(), connection: 1, now: 1_000)
        let actions = machine.detached(3, connection: 1, device: "phone", cleanly: true, now: 1_100)
        #expect(actions.last == .stop(3, now: 1_100))
        #expect(writes(actions).allSatisfy { $0.1 == nil }, "nothing persisted before the stop")
    }

    @Test func aConnectionOfASessionNoLongerOpenOnlyLeavesItsTailMarker() {
        var machine = open(record(1))
        _ = attach(&machine, phone(), connection: 1)
        _ = machine.stopRequested(1, now: 1_050)
        let actions = machine.detached(1, connection: 1, device: "phone", cleanly: false, now: 1_100)
        #expect(actions == [.tailAfterCommits(TailLine(kind: .deviceDisconnected, session: 1, time: 1_100, device: "phone", detail: "connection lost"))])
    }
}
