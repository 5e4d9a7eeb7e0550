public import SessionCore
internal import Foundation
public import GroupCommit
internal import JournalStorage
internal import SessionModel
public import Logging

/// Turns each group commit into what devices and counters must learn from it: `<ack>` to the
/// connections whose events are now durable, `<error>` to those whose events could not be stored.
public struct CommitRouter: Sendable {
    private let connections: ConnectionTable
    private let counters: CaptureCounters
    private let tail: LiveTail
    private let health: StorageHealth
    private let logger: Logger

    public init(connections: ConnectionTable, counters: CaptureCounters, tail: LiveTail, health: StorageHealth, logger: Logger) {
        self.connections = connections
        self.counters = counters
        self.tail = tail
        self.health = health
        self.logger = logger
    }

    public func route(_ report: CommitReport, of session: EvaluationSession) {
        if let failure = report.failure {
            // Per connection: how many failed, and the seqs they span (a connection's events are in order).
            var perOrigin: [UInt64: (count: Int, seqs: ClosedRange<Int64>?)] = [:]
            for record in report.records {
                if case .media(let media) = record.content { session.mediaCommitted(media.bytes.count, stored: false) }
                var failed = perOrigin[record.origin] ?? (0, nil)
                failed.count += 1
                if let seq = record.seq {
                    failed.seqs = failed.seqs.map { min($0.lowerBound, seq)...max($0.upperBound, seq) } ?? seq...seq
                }
                perOrigin[record.origin] = failed
            }
            let reason = failure.isDiskFull ? "the server's disk is full" : "the server cannot write its journal (\(failure.message))"
            if health.failed(reason: reason, diskFull: failure.isDiskFull, now: report.committedAt) {
                logger.error("storage: cannot commit to session \(session.id) (\(failure)); devices get an error for each refused batch until a commit succeeds again\(failure.isDiskFull ? ": free some space" : "")")
            }
            for (origin, failed) in perOrigin {
                connections.signal(origin, .storageFailed(reason: reason, count: failed.count, seqs: failed.seqs))
            }
            return
        }
        if let ended = health.succeeded() {
            logger.notice("storage: commits succeed again, after \(ended.failedCommits) failed in \(Int(report.committedAt - ended.since)) s")
        }
        var stored = 0
        var duplicates = 0
        for (record, rowID) in zip(report.records, report.rowIDs) {
            switch record.content {
            case .event:
                if rowID == nil { duplicates += 1 } else { stored += 1 }
            case .media(let media):
                session.mediaCommitted(media.bytes.count, stored: rowID != nil)
                if rowID == nil { duplicates += 1 } else { counters.mediaChunksStored.add(1) }
            }
        }
        session.stored.add(stored)
        session.duplicates.add(duplicates)
        counters.eventsStored.add(stored)
        counters.eventsDuplicate.add(duplicates)
        for (origin, seq) in report.highestSeqByOrigin {
            connections.signal(origin, .durable(seq: seq))
        }
        if tail.isFollowed { tail.publish(Self.tailLines(report, session: session.id)) }
    }

    /// The stored events of a commit as tail lines, in storage order.
    private static func tailLines(_ report: CommitReport, session: Int64) -> [TailLine] {
        zip(report.records, report.rowIDs).compactMap { record, rowID in
            rowID.flatMap { record.stored(as: $0) }.map { .event($0, session: session) }
        }
    }
}
