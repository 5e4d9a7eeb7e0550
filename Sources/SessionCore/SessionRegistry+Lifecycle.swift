internal import Foundation
internal import GroupCommit
internal import JournalStorage
public import SessionModel

/// The developer's commands (start, stop, delete), imports, and the daemon's start-up and shutdown.
extension SessionRegistry {
    /// Starts a session; it records as soon as its device (or, without one, the next device) connects.
    /// With `pairing`, the session gets a six-digit code that its device must present in `<hello>`.
    /// With `study`, the session records that study's iteration and participant; its file gets the
    /// study's description and tasks (`StudyContext`).
    public func start(name: String?, testUser: String?, notes: String?, sensors: [String],
                      device: String?, pairing: Bool = false, study: StudyAssignment? = nil, now: Double) async throws -> SessionRecord {
        if let refusal = lock.withLock({ machine.startRequested(device: device) }) { throw refusal }
        let context = try study.map { try catalog.studyContext(of: $0) }
        let record = try catalog.createSession(name: name, testUser: testUser ?? study?.participant, notes: notes, sensors: sensors,
                                               boundDevice: device, pairingCode: pairing ? Machine.randomPairingCode() : nil,
                                               study: study, now: now)
        let session = try makeSession(record, isAutomatic: false, tasks: context?.tasks ?? [])
        // Open at once (a device may claim it now); announced once its file says what it is.
        let announcements = lock.withLock {
            live[record.id] = session
            return machine.started(record, now: now)
        }
        try await session.journal.perform { file in
            try file.writeMetadata(record)
            if let context { try file.writeStudyContext(context) }
        }
        lock.withLock { _ = perform(announcements) }
        return record
    }

    /// Stops a session: everything received before the stop is committed and the file finalised.
    public func stop(_ key: String, now: Double) async throws -> SessionRecord {
        let record = try find(key)
        guard let session = lock.withLock({ live[record.id] }) else { throw SessionError.alreadyStopped(record.id) }
        return try await stop(session, now: now)
    }

    /// Stops every open session.
    public func stopAll(now: Double) async throws -> [SessionRecord] {
        var stopped: [SessionRecord] = []
        for session in openSessions() {
            stopped.append(try await stop(session, now: now))
        }
        return stopped
    }

    func stop(_ session: EvaluationSession, now: Double) async throws -> SessionRecord {
        // Stopped for its device's drop: the device's next session waits for the highest seq this one stored.
        let floor = lock.withLock { resendFloors.first { $0.value.session == session.id } }
        let final: SessionRecord
        do {
            try lock.withLock {
                let actions = try machine.stopRequested(session.id, now: now).get()
                live[session.id] = nil
                _ = perform(actions, context: session)
            }
            try await session.journal.flush()
            final = session.snapshot
            let highest = try await session.journal.perform { file -> Int64? in
                try file.writeMetadata(final)
                try file.closeGaps(at: now)
                return floor.flatMap { file.highestSeq(of: $0.key) }
            }
            floor?.value.settle(highest)
        } catch {
            floor?.value.settle(nil)
            throw error
        }
        try await session.journal.close()
        try catalog.update(final)
        // The catalog's writes the stop queued (its invitation `done`) are in before it is announced.
        await withCheckedContinuation { continuation in catalogQueue.async { continuation.resume() } }
        // Now that the file is final: what reads it (transcription, the automatic report) starts here.
        decide { $0.stopFinished(final, now: now) }
        return final
    }

    /// A session made (or grown) by an import, now in the catalog: listed, announced, and handed to
    /// what follows a stop (transcription, analysis) like a session that ended here.
    public func imported(_ record: SessionRecord, from file: String, now: Double) {
        decide { $0.imported(record, from: file, now: now) }
    }

    /// Deletes a stopped session and its file.
    public func delete(_ key: String) throws -> SessionRecord {
        let record = try find(key)
        if let refusal = lock.withLock({ machine.deleteRequested(record.id) }) { throw refusal }
        try catalog.deleteSession(record)
        decide { $0.deleted(record) }
        return record
    }

    // MARK: Start-up and shutdown

    /// Reopens the sessions that were open when the daemon last stopped. A session that was
    /// recording becomes `interrupted`, with a gap from its last event to its device's return.
    public func recover(now: Double) async throws {
        for var record in try catalog.sessions() where record.state.isOpen {
            let reader = try SessionReader(path: record.path)
            record.events = try reader.eventCount()
            let lastEvent = try reader.events(last: 1).last?.received
            let invitation = try catalog.invitation(sessionId: record.id)?.code
            let session = try makeSession(record, isAutomatic: false, tasks: try reader.studyContext()?.tasks ?? [], invitation: invitation)
            session.setClockOffset(try reader.clockOffset())
            let actions = lock.withLock {
                live[record.id] = session
                return machine.recovered(record, lastEvent: lastEvent, invitation: invitation, now: now)
            }
            // Before anything connects: written here, and a failure stops the start.
            for action in actions {
                guard case .update(let decided, let write?) = action else {
                    lock.withLock { _ = perform([action]) }
                    continue
                }
                let updated = session.update { $0 = decided }
                try await session.journal.perform { try Self.apply(write, updated, to: $0) }
                try catalog.update(updated)
            }
        }
    }

    /// Commits and closes every journal; open sessions stay open in the catalog and resume after
    /// restart. The lifecycle events end.
    public func shutdown() async {
        let sessions = lock.withLock { () -> [EvaluationSession] in
            defer {
                live = [:]
                graceTimers.values.forEach { $0.cancel() }
                graceTimers = [:]
                // No session opens any more: nothing waits for a floor.
                resendFloors.values.forEach { $0.settle(nil) }
                resendFloors = [:]
            }
            return machine.shutdown().compactMap { live[$0] }
        }
        for session in sessions {
            do {
                try await session.journal.flush()
                let record = session.snapshot
                try await session.journal.perform { try $0.writeMetadata(record) }
                // Still open: it resumes after the restart, so its indexes wait for its stop.
                try await session.journal.close(buildingIndexes: false)
                try catalog.update(record)
            } catch {
                logger.error("session \(session.id): cannot finish its journal cleanly: \(error)")
            }
        }
        events.finish()
    }
}
