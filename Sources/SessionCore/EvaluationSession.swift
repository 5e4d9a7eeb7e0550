internal import Foundation
public import GroupCommit
package import JournalStorage
public import MuEvalWire
internal import NIOConcurrencyHelpers
public import SessionModel
package import Synchronization
internal import WireProtocol

/// A live evaluation session: one test user, one device, one journal (thesis 2.6.2).
///
/// Connections hold a reference to their session and append to its journal directly; the
/// session's record (metadata and counts) is guarded by a lock that the hot path touches
/// once per read, not per event.
public final class EvaluationSession: Sendable {
    public let id: Int64
    public let journal: JournalWriter
    /// Opened for one connection under the `auto` policy, and stopped with it.
    public let isAutomatic: Bool
    /// Its study's tasks, in order, as its device's welcome tells them (none outside a study).
    let tasks: [WelcomeTask]
    /// The code of the study invitation that opened it, for the questionnaire link.
    let invitation: String?
    private let selection: SensorSelection
    /// Its metadata; `SessionLifecycleStateMachine` decides it, `SessionRegistry` hands it over.
    private let record: NIOLockedValueBox<SessionRecord>
    private let open: Synchronization.Atomic<Bool>
    package let stored = Synchronization.Atomic<Int>(0)
    package let filtered = Synchronization.Atomic<Int>(0)
    package let duplicates = Synchronization.Atomic<Int>(0)
    /// Bytes of media stored, and of media admitted but not yet committed: the media limit counts both.
    private let mediaBytes = Synchronization.Atomic<Int>(0)
    private let mediaPending = Synchronization.Atomic<Int>(0)
    private let maxMediaBytes: Int
    /// Receive time minus device time of the newest committed event its device timestamped, as a
    /// Double's bits (NaN: none yet): puts an observer's note on the device's clock.
    private let clockOffsetBits = Synchronization.Atomic<UInt64>(Double.nan.bitPattern)

    /// The origin of observers' notes in its journal: connections' origins start at 1 (`ConnectionTable`).
    static let observerOrigin: UInt64 = 0


    /// 4 GiB: an hour of face video at 4 Mbit/s plus its audio, or days of speech.
    public static let defaultMaxMediaBytes = 4 << 30

    init(record: SessionRecord, journal: JournalWriter, isAutomatic: Bool, tasks: [StudyTask] = [], invitation: String? = nil,
         mediaBytes: Int = 0, maxMediaBytes: Int = .max) {
        id = record.id
        self.tasks = tasks.enumerated().map { index, task in
            WelcomeTask(name: task.name, instructions: task.instructions, timeLimit: task.timeLimit, order: Int64(index) + 1)
        }
        self.invitation = invitation
        self.mediaBytes.store(mediaBytes, ordering: .relaxed)
        self.maxMediaBytes = maxMediaBytes
        self.journal = journal
        self.isAutomatic = isAutomatic
        selection = SensorSelection(record.sensors)
        self.record = NIOLockedValueBox(record)
        open = Synchronization.Atomic(record.state.isOpen)
        stored.store(Int(record.events), ordering: .relaxed)
        filtered.store(Int(record.filtered), ordering: .relaxed)
        duplicates.store(Int(record.duplicates), ordering: .relaxed)
    }

    /// Receive time minus device time, from the newest committed event with a device timestamp; nil before one.
    var clockOffset: Double? {
        let offset = Double(bitPattern: clockOffsetBits.load(ordering: .relaxed))
        return offset.isNaN ? nil : offset
    }

    func setClockOffset(_ offset: Double?) {
        clockOffsetBits.store((offset ?? .nan).bitPattern, ordering: .relaxed)
    }

    /// Called with every commit, on the journal's queue: keeps the newest device event's offset.
    /// Walks back from the end only until it finds one, so a commit costs a record or two, not its size.
    func observeClock(_ report: CommitReport) {
        guard report.failure == nil else { return }
        for records in report.appended.reversed() {
            for record in records.reversed() where record.origin != Self.observerOrigin {
                guard let timestamp = record.event?.timestamp else { continue }
                setClockOffset(record.received - timestamp)
                return
            }
        }
    }

    /// Where a note taken at `now` (muevald's clock) falls on the device's clock: at `deviceTime`
    /// when the observer gave one (a replay's position), else `now` moved by the device's offset;
    /// nil, an estimated timestamp (the receive time), while the offset is unknown.
    static func noteTimestamp(at deviceTime: Double?, now: Double, offset: Double?) -> Double? {
        deviceTime ?? offset.map { now - $0 }
    }

    /// Whether events may still be appended.
    public var isOpen: Bool { open.load(ordering: .acquiring) }

    /// What its device's `<welcome>` says. `console`: where phones reach the web console, for an
    /// invited session's questionnaire page (`/i/CODE`); nil when the console is off.
    public func welcome(console: String?) -> Welcome {
        Welcome(sessionId: String(id), sensors: snapshot.sensors, tasks: tasks,
                questionnaire: invitation.flatMap { code in console.map { "\($0)/i/\(code)" } })
    }

    /// The record with current counts.
    public var snapshot: SessionRecord {
        withCounts(record.withLockedValue { $0 })
    }

    private func withCounts(_ record: SessionRecord) -> SessionRecord {
        var snapshot = record
        snapshot.events = Int64(stored.load(ordering: .relaxed))
        snapshot.filtered = Int64(filtered.load(ordering: .relaxed))
        snapshot.duplicates = Int64(duplicates.load(ordering: .relaxed))
        return snapshot
    }

    /// Whether the session records this event or media chunk (see `SensorSelection`): media by
    /// their sensor, `microphone` or `faceCamera`.
    package func selects(_ content: JournalRecord.Content) -> Bool {
        switch content {
        case .event(let event): selection.selects(eventClass: event.eventClass, sensor: event.sensor)
        case .media(let media): selection.selects(media.kind)
        }
    }

    /// Admits a media chunk of `bytes` against the session's media limit: nil, or why it is refused.
    package func admitMedia(bytes: Int) -> String? {
        let pending = mediaPending.wrappingAdd(bytes, ordering: .relaxed).newValue
        guard mediaBytes.load(ordering: .relaxed) + pending <= maxMediaBytes else {
            mediaPending.wrappingSubtract(bytes, ordering: .relaxed)
            return "the session holds its limit of \(maxMediaBytes) bytes of media (limits.max_media_bytes_per_session); this chunk was not stored"
        }
        return nil
    }

    /// A media chunk admitted by `admitMedia` was committed (stored, or a duplicate: `stored` false).
    package func mediaCommitted(_ bytes: Int, stored: Bool) {
        mediaPending.wrappingSubtract(bytes, ordering: .relaxed)
        if stored { mediaBytes.wrappingAdd(bytes, ordering: .relaxed) }
    }

    /// Changes the record under the lock and returns the result with current counts.
    @discardableResult
    func update(_ change: (inout SessionRecord) -> Void) -> SessionRecord {
        let result = record.withLockedValue { record in
            change(&record)
            return withCounts(record)
        }
        open.store(result.state.isOpen, ordering: .releasing)
        return result
    }
}
