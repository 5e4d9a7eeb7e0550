internal import Foundation
public import GroupCommit
internal import JournalStorage
internal import NIOConcurrencyHelpers
public import SessionModel
internal import Synchronization
public import WireProtocol

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
    private let selection: SensorSelection
    private let record: NIOLockedValueBox<SessionRecord>
    private let open: Synchronization.Atomic<Bool>
    let stored = Synchronization.Atomic<Int>(0)
    let filtered = Synchronization.Atomic<Int>(0)
    let duplicates = Synchronization.Atomic<Int>(0)

    init(record: SessionRecord, journal: JournalWriter, isAutomatic: Bool) {
        id = record.id
        self.journal = journal
        self.isAutomatic = isAutomatic
        selection = SensorSelection(record.sensors)
        self.record = NIOLockedValueBox(record)
        open = Synchronization.Atomic(record.state.isOpen)
        stored.store(Int(record.events), ordering: .relaxed)
        filtered.store(Int(record.filtered), ordering: .relaxed)
        duplicates.store(Int(record.duplicates), ordering: .relaxed)
    }

    /// Whether events may still be appended.
    public var isOpen: Bool { open.load(ordering: .acquiring) }

    /// The record with current counts.
    public var snapshot: SessionRecord {
        var snapshot = record.withLockedValue { $0 }
        snapshot.events = Int64(stored.load(ordering: .relaxed))
        snapshot.filtered = Int64(filtered.load(ordering: .relaxed))
        snapshot.duplicates = Int64(duplicates.load(ordering: .relaxed))
        return snapshot
    }

    /// Whether the session records this event (see `SensorSelection`).
    public func selects(_ event: WireEvent) -> Bool {
        selection.selects(eventClass: event.eventClass, sensor: event.sensor)
    }

    /// Changes the record under the lock and returns the result with current counts.
    @discardableResult
    func update(_ change: (inout SessionRecord) -> Void) -> SessionRecord {
        record.withLockedValue { change(&$0) }
        let result = snapshot
        open.store(result.state.isOpen, ordering: .releasing)
        return result
    }
}
