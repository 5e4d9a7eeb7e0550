import MuEvalCapture
import MuEvalWire
import Testing
import WireProtocol

/// The delivery logic without sockets: what the machine says to do as the server answers.
@Suite struct DeliveryStateMachineTests {
    typealias Machine = DeliveryStateMachine

    static func machine(capacity: Int = 100, policy: Machine.DropPolicy = .dropNewest, spooling: Bool = false,
                        firstSeq: Int64 = 1) -> Machine {
        Machine(limits: .init(capacity: capacity, maxBatchBytes: 1 << 20, policy: policy, reconnectDelays: 1...8),
                firstSeq: firstSeq, spooling: spooling)
    }

    @discardableResult
    static func record(_ machine: inout Machine, _ count: Int, eventClass: String = "UserInputEvent", sensor: String? = nil) -> [Int64] {
        (0..<count).compactMap { _ in
            machine.record(kind: .event(eventClass: eventClass, sensor: sensor)) { Array("<event>\($0)</event>".utf8) }
        }
    }

    /// Connects and takes the first write (the hello and everything pending).
    static func connect(_ machine: inout Machine, now: Double = 0) -> [Int64] {
        #expect(machine.nextAction(now: now) == .connect)
        machine.connected()
        guard case .write(hello: true, let seqs) = machine.nextAction(now: now) else {
            Issue.record("a new connection starts with the hello")
            return []
        }
        machine.written()
        return seqs
    }

    @Test func recordedEventsAreWrittenAfterTheHelloAndAnAckSettlesThem() {
        var machine = Self.machine()
        #expect(Self.record(&machine, 3) == [1, 2, 3])
        #expect(Self.connect(&machine) == [1, 2, 3])
        // Until the ack comes, or the ack timeout (30 s) gives the connection up.
        #expect(machine.nextAction(now: 0) == .wait(until: 30))
        Self.record(&machine, 2)
        #expect(machine.nextAction(now: 0) == .write(hello: false, seqs: [4, 5]))
        machine.written()
        machine.acknowledged(through: 4)
        #expect(machine.statistics.acknowledged == 4)
        #expect(machine.statistics.pending == 1)
        #expect(machine.statistics.sent == 5 && machine.statistics.resent == 0)
    }

    @Test func afterAReconnectEverythingUnacknowledgedIsWrittenAgainFromTheOldest() {
        var machine = Self.machine()
        Self.record(&machine, 4)
        _ = Self.connect(&machine)
        machine.acknowledged(through: 2)
        machine.connectionLost("reset", now: 10, jitter: 1)
        // A late ack of the lost connection settles nothing: the new server may not have those events.
        machine.acknowledged(through: 4)
        #expect(machine.statistics.pending == 2)
        // Backoff: the first delay (1 s) at full jitter.
        #expect(machine.nextAction(now: 10) == .wait(until: 11))
        #expect(Self.connect(&machine, now: 11) == [3, 4])
        #expect(machine.statistics.resent == 2)
        #expect(machine.statistics.disconnects == 1 && machine.statistics.connections == 2)
    }

    @Test func backoffDoublesWithJitterUpToTheLastDelayAndAWelcomeResetsIt() {
        var machine = Self.machine()
        var waits: [Double] = []
        var now = 0.0
        for _ in 0..<6 {
            #expect(machine.nextAction(now: now) == .connect)
            machine.connectFailed("refused", now: now, jitter: 0)
            guard case .wait(let until?) = machine.nextAction(now: now) else { Issue.record("waits"); return }
            waits.append(until - now)
            now = until
        }
        // Half of 1, 2, 4, 8, 8, 8 (zero jitter takes the lower half).
        #expect(waits == [0.5, 1, 2, 4, 4, 4])
        #expect(machine.statistics.lastProblem == "refused")
        _ = Self.connect(&machine, now: now)
        machine.welcomed(Welcome(sessionId: "1", sensors: []))
        machine.connectionLost(nil, now: now, jitter: 0)
        #expect(machine.nextAction(now: now) == .wait(until: now + 0.5))
    }

    @Test func aConnectionThatStopsAcknowledgingIsReplaced() {
        var machine = Machine(limits: .init(capacity: 100, reconnectDelays: 1...8, ackTimeout: 10), firstSeq: 1)
        Self.record(&machine, 2)
        _ = Self.connect(&machine, now: 0)
        #expect(machine.nextAction(now: 5) == .wait(until: 10))
        // An ack is progress: the wait for the rest starts over.
        machine.acknowledged(through: 1)
        #expect(machine.nextAction(now: 6) == .wait(until: 16))
        #expect(machine.nextAction(now: 16) == .replaceConnection)
        #expect(machine.statistics.lastProblem == "no acknowledgement for 10 s: connecting again")
        machine.connectionLost(nil, now: 16, jitter: 1)
        #expect(Self.connect(&machine, now: 17) == [2])
        // Nothing in flight: an idle connection is never given up.
        machine.acknowledged(through: 2)
        #expect(machine.nextAction(now: 1_000) == .wait(until: nil))
    }

    @Test func anErrorWithASeqRefusesThatEventForGood() {
        var machine = Self.machine()
        Self.record(&machine, 3)
        _ = Self.connect(&machine)
        let reason = machine.refused(WireReplyError(reason: "missing \"class\"", seq: 2), now: 0, jitter: 0)
        #expect(reason == "missing \"class\"")
        machine.acknowledged(through: 3)
        #expect(machine.statistics.refused == 1 && machine.statistics.acknowledged == 2 && machine.statistics.pending == 0)
    }

    /// A failed group commit (a full disk): an error with a range; a later ack does not settle those.
    @Test func aRangedErrorKeepsItsEventsAndWritesThemAgainAfterADelay() {
        var machine = Self.machine()
        Self.record(&machine, 5)
        _ = Self.connect(&machine)
        _ = machine.refused(WireReplyError(reason: "3 events not stored: the disk is full", seq: 4, fromSeq: 2), now: 0, jitter: 1)
        machine.acknowledged(through: 5)
        #expect(machine.statistics.acknowledged == 2)
        #expect(machine.statistics.pending == 3)
        #expect(machine.nextAction(now: 0.5) == .wait(until: 1))
        #expect(machine.nextAction(now: 1) == .write(hello: false, seqs: [2, 3, 4]))
        machine.written()
        machine.acknowledged(through: 5)
        #expect(machine.statistics.pending == 0 && machine.statistics.refused == 0)
    }

    @Test func aFullQueueDropsTheNewestAndCountsThem() {
        var machine = Self.machine(capacity: 3)
        #expect(Self.record(&machine, 5) == [1, 2, 3])
        #expect(machine.statistics.dropped == 2)
        #expect(!machine.hasRoom)
        _ = Self.connect(&machine)
        machine.acknowledged(through: 3)
        #expect(machine.hasRoom)
        // Seqs go on where they were: a dropped event took none.
        #expect(Self.record(&machine, 1) == [4])
    }

    @Test func underDropOldestTheLatestAreKept() {
        var machine = Self.machine(capacity: 3, policy: .dropOldest)
        Self.record(&machine, 5)
        #expect(machine.statistics.dropped == 2)
        #expect(Self.connect(&machine) == [3, 4, 5])
    }

    @Test func withASpoolNothingIsWrittenBeforeItIsSpooledAndSettledSeqsAreForgotten() {
        var machine = Self.machine(spooling: true)
        Self.record(&machine, 2)
        #expect(machine.nextAction(now: 0) == .spool([1, 2]))
        machine.spooled(through: 2)
        #expect(machine.nextAction(now: 0) == .connect)
        machine.connected()
        Self.record(&machine, 1)
        #expect(machine.nextAction(now: 0) == .spool([3]))
        machine.spooled(through: 3)
        #expect(machine.nextAction(now: 0) == .write(hello: true, seqs: [1, 2, 3]))
        machine.written()
        machine.acknowledged(through: 2)
        #expect(machine.nextAction(now: 0) == .forgetSpooled(through: 2))
        #expect(machine.nextAction(now: 0) == .wait(until: 30))
    }

    @Test func atTheEndTheSpoolForgetsWhatIsSettledBeforeTheGoodbye() {
        var machine = Self.machine(spooling: true)
        Self.record(&machine, 1)
        #expect(machine.nextAction(now: 0) == .spool([1]))
        machine.spooled(through: 1)
        _ = Self.connect(&machine)
        machine.acknowledged(through: 1)
        machine.stop(deadline: 10)
        #expect(machine.nextAction(now: 0) == .forgetSpooled(through: 1))
        #expect(machine.nextAction(now: 0) == .sayGoodbye)
        #expect(machine.nextAction(now: 0) == .finish)
    }

    @Test func aRestoredBacklogGoesFirstAndNewSeqsContinueAfterIt() {
        var machine = Self.machine(spooling: true, firstSeq: 1)
        machine.restore([(seq: 41, bytes: Array("a".utf8), kind: .event(eventClass: "CustomEvent", sensor: nil)),
                         (seq: 40, bytes: Array("b".utf8), kind: .media(.audio))])
        #expect(machine.statistics.restored == 2 && machine.statistics.pending == 2)
        #expect(Self.record(&machine, 1) == [42])
        #expect(machine.nextAction(now: 0) == .spool([42]))
        machine.spooled(through: 42)
        #expect(Self.connect(&machine) == [40, 41, 42])
    }

    @Test func aSpoolThatFailsLeavesDeliveryFromMemory() {
        var machine = Self.machine(spooling: true)
        Self.record(&machine, 2)
        #expect(machine.nextAction(now: 0) == .spool([1, 2]))
        machine.spoolFailed("disk full")
        #expect(Self.connect(&machine) == [1, 2])
        #expect(machine.statistics.lastProblem == "disk full")
    }

    @Test func stopWaitsForWhatTheSessionRecordsThenSaysGoodbye() {
        var machine = Self.machine()
        Self.record(&machine, 2)
        Self.record(&machine, 1, eventClass: "DeviceSensorEvent", sensor: "battery")
        _ = Self.connect(&machine)
        machine.welcomed(Welcome(sessionId: "7", sensors: ["UserInputEvent"]))
        machine.stop(deadline: 30)
        // The battery reading is not selected; a selected event is: both pending, one awaited.
        #expect(machine.unsettled.awaited == 2 && machine.unsettled.notSelected == 1)
        #expect(machine.nextAction(now: 1) == .wait(until: 30))
        machine.acknowledged(through: 2)
        #expect(machine.nextAction(now: 2) == .sayGoodbye)
        #expect(machine.nextAction(now: 2) == .finish)
        #expect(machine.statistics.sessions == ["7"])
    }

    @Test func stopGivesUpAtItsDeadlineWithoutAServer() {
        var machine = Self.machine()
        Self.record(&machine, 1)
        #expect(machine.nextAction(now: 0) == .connect)
        machine.connectFailed("no server", now: 0, jitter: 1)
        machine.stop(deadline: 0.5)
        #expect(machine.nextAction(now: 0.1) == .wait(until: 0.5))
        #expect(machine.nextAction(now: 0.5) == .finish)
        #expect(machine.unsettled.awaited == 1)
    }

    @Test func aBacklogLargerThanABatchGoesOutInBatches() {
        var machine = Machine(limits: .init(capacity: 100, maxBatchBytes: 40), firstSeq: 1)
        Self.record(&machine, 6)  // 15 to 16 bytes each
        #expect(Self.connect(&machine) == [1, 2])
        #expect(machine.nextAction(now: 0) == .write(hello: false, seqs: [3, 4]))
        machine.written()
        #expect(machine.nextAction(now: 0) == .write(hello: false, seqs: [5, 6]))
    }
}

@Suite struct CaptureClockTests {
    /// The phone's clock is set back an hour mid-session: time stamps follow the monotonic clock.
    @Test func aWallClockChangeNeitherReordersNorStretchesTheSession() {
        let clock = CaptureClock(wall: 1_700_000_000, monotonic: 50)
        #expect(clock.timestamp(monotonic: 50) == 1_700_000_000)
        #expect(clock.timestamp(monotonic: 52.5) == 1_700_000_002.5)
        // Nothing the wall clock does afterwards enters: later monotonic times are later stamps.
        #expect(clock.timestamp(monotonic: 53) > clock.timestamp(monotonic: 52.5))
    }

    @Test func eventsAreEncodedWithTheirSeqAndAMillisecondTimestamp() throws {
        var decoder = WireDecoder()
        decoder.append(CaptureEvent.marker(.begin, "Edit blog posting").encoded(seq: 9, timestamp: 1_700_000_000.12345))
        guard case .success(.event(let event))? = decoder.next() else { Issue.record("an event"); return }
        #expect(event.seq == 9 && event.eventClass == "CustomEvent")
        #expect(event.timestamp == 1_700_000_000.123)
    }
}
