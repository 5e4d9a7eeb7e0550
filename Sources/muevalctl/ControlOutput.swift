internal import ControlProtocol
internal import Foundation
internal import ReplicationArchive
internal import SessionModel
internal import WireProtocol

/// muevalctl's output: pretty JSON for scripts, aligned tables for people.
enum ControlOutput {
    static func json<R: Encodable>(_ value: R) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(value), as: UTF8.self)) ?? "null"
    }

    static func status(_ status: StatusReport) -> String {
        let c = status.counters
        var text = """
            muevald \(status.version), pid \(status.pid), up \(duration(Date().timeIntervalSince1970 - status.started))
            devices connect to  \(status.listen.map(\.text) ?? "(not listening yet)")\(status.listenTLS.map { ", " + $0.text } ?? "")
            zeroconf            \(status.zeroconf)
            control socket      \(status.socket)
            data directory      \(status.dataDirectory)
            unknown devices     \(status.unknownDevicePolicy.rawValue)
            connections         \(c.connectionsOpen) open, \(c.connectionsAccepted) accepted, \(c.connectionsRefused) refused
            events              \(c.eventsReceived) received, \(c.eventsStored) stored, \(c.eventsDuplicate) duplicate, \(c.eventsFiltered) not selected
            storage             \(status.storageProblem.map { "FAILING since \(time($0.since)): \($0.reason); \($0.failedCommits) commits refused\($0.diskFull ? " (free some space: muevald resumes by itself)" : "")" } ?? "ok")\(Self.sharedSync(status.sharedSync))
            live tails          \(status.tails)
            refused             \(c.eventsRejectedNoSession) without session, \(c.malformedMessages) malformed, \(c.eventsFailedStorage) not storable, \(c.repliesDropped) replies dropped
            credentials         \(c.authenticationFailures) wrong token or pairing code, \(c.pairingRefused) pairing attempts held back (too many wrong codes)
            turned away         \(Self.refusals(c.refusals))

            """
        if let descriptors = status.descriptors { text += "descriptors         " + Self.descriptors(descriptors) + "\n" }
        // A code changes after too many wrong ones (docs/SECURITY.md): this is where the developer reads the new one.
        let codes = status.sessions.compactMap { session in session.pairingCode.map { "session \(session.id) \($0)" } }
        if !codes.isEmpty { text += "pairing codes       \(codes.joined(separator: ", "))\n" }
        if !status.transcriptions.isEmpty { text += transcriptions(status.transcriptions) }
        if let reports = status.reports, reports.waiting + reports.writing > 0 {
            text += "reports             \(reports.writing) being written, \(reports.waiting) queued (stopped sessions' automatic reports)\n"
        }
        if let replication = status.replication {
            let behind = replication.pendingEvents > 0
                ? "\(replication.pendingEvents) events behind" + (replication.lagSeconds.map { String(format: ", %.1f s", $0) } ?? "")
                : replication.state == "replicating" ? "caught up" : "nothing waits"
            text += "postgres            \(replication.target): \(replication.state), \(behind)\n"
            for session in replication.sessions {
                guard let owner = session.ownedBy else { continue }
                text += "  not replicated    session \(session.session): its uuid \(session.uuid) is \(owner)'s session in PostgreSQL\n"
            }
        }
        text += status.sessions.isEmpty ? "no open session: start one with `muevalctl start`\n" : "\n" + sessions(status.sessions)
        return text
    }

    /// `; one sync for every session: 1204 syncs, 0 failed`, or nothing where each commit syncs its own file.
    static func sharedSync(_ sync: StorageSyncStatus?) -> String {
        sync.map { "; one sync for every session: \($0.syncs) syncs, \($0.failures) failed" } ?? ""
    }

    /// Open files against the limit and connections by kind against the budget:
    /// `312 of 1024 open; connections 250 of 768: devices 200 + 12 before hello, …`.
    static func descriptors(_ d: DescriptorStatus) -> String {
        "\(d.open) of \(d.limit) open; connections \(d.connections) of \(d.connectionLimit): "
            + "devices \(d.captureDevices) + \(d.capturePending) before hello (up to \(d.captureLimit)), "
            + "console \(d.consoleHTTP) + \(d.consolePending) before a request + \(d.consoleWebSockets) WebSockets (up to \(d.consoleLimit)), "
            + "control \(d.control); \(d.refused) refused, \(d.evicted) silent ones closed to make room, \(d.timedOut) timed out"
    }

    /// Connections and upgrades refused at the door, by the setting that refused them:
    /// `3 by capture.web_max_per_address (web_per_address), 1 by …`, or `none`.
    static func refusals(_ counts: [String: Int]) -> String {
        let lines = counts.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { key, count in
            "\(count) \(RefusalReason(rawValue: key).map { "by \($0.setting) " } ?? "")(\(key))"
        }
        return lines.isEmpty ? "none" : lines.joined(separator: ", ")
    }

    /// What is transcribed now and what waits: `transcribing  session 3 voice-1 42 % (1 more waits)`.
    static func transcriptions(_ items: [SessionTranscription]) -> String {
        let running = items.filter { $0.status.state == .running }
        let waiting = items.count - running.count
        var parts = running.map { "session \($0.session) \($0.status.stream) \(Int(saturating: ($0.status.progress * 100).rounded())) %" }
        if waiting > 0 { parts.append("\(waiting) stream\(waiting == 1 ? "" : "s") waiting") }
        return "transcribing        \(parts.joined(separator: ", "))\n"
    }

    static func imported(_ outcomes: [ImportOutcome]) -> String {
        outcomes.map { outcome in
            var text = "session \(outcome.session.id) (\(outcome.session.name)): \(outcome.events) events from \(outcome.file) (\(outcome.format.rawValue))"
            if outcome.mediaChunks > 0 { text += ", \(outcome.mediaChunks) media chunks" }
            text += "\n"
            for file in outcome.attached { text += "  attached \(file)\n" }
            if let cutShort = outcome.cutShort { text += "  cut short: \(cutShort)\n" }
            if let origin = outcome.origin {
                switch origin.identity {
                case .kept: break
                case .otherLab: text += "  new uuid \(outcome.session.uuid) (the file came from lab \(origin.lab ?? ""), where it is \(origin.uuid))\n"
                case .unknownLab: text += "  new uuid \(outcome.session.uuid) (the file does not say which lab it came from)\n"
                case .taken: text += "  new uuid \(outcome.session.uuid) (this data directory has \(origin.uuid) already)\n"
                }
            }
            return text
        }.joined()
    }

    static func transcriptionQueued(_ items: [SessionTranscription]) -> String {
        items.map { "session \($0.session): \($0.status.stream) (\($0.status.device)) queued for transcription\n" }.joined()
    }

    static func media(_ summary: MediaSummary, directory: String) -> String {
        guard !summary.files.isEmpty else { return "session \(summary.session) has no media\n" }
        var table = TextTable(["FILE", "KIND", "TYPE", "START", "DURATION", "BYTES", "MISSING"])
        for file in summary.files {
            table.add([directory + "/" + file.file, file.stream.kind, file.stream.contentType, time(file.stream.start, fractional: true),
                       file.stream.duration.map { String(format: "%.1f s", $0) } ?? "-", String(file.bytes),
                       file.stream.missingParts == 0 ? "-" : "\(file.stream.missingParts) chunks"])
        }
        return table.render(header: true)
    }

    /// `status --watch`: the status, and each open session's events per second since the last refresh.
    static func watch(_ status: StatusReport, previous: (report: StatusReport, elapsed: Double)?) -> String {
        let rate = { (now: Int64, before: Int64?) -> String in
            guard let before, let elapsed = previous?.elapsed, elapsed > 0 else { return "-" }
            return String(format: "%.0f/s", Double(now - before) / elapsed)
        }
        let c = status.counters
        var text = """
            muevald \(status.version) on \(status.listen.map(\.text) ?? "-"), up \(duration(Date().timeIntervalSince1970 - status.started)), \(time(Date().timeIntervalSince1970))
            connections \(c.connectionsOpen) open   events \(c.eventsStored) stored (\(rate(Int64(c.eventsStored), previous.map { Int64($0.report.counters.eventsStored) })))   \(c.eventsReceived) received   \(c.malformedMessages) malformed   \(c.eventsRejectedNoSession) without session


            """
        guard !status.sessions.isEmpty else { return text + "no open session: start one with `muevalctl start`\n" }
        var table = TextTable(["ID", "NAME", "STATE", "DEVICE", "USER", "EVENTS", "RATE"])
        for session in status.sessions {
            let before = previous?.report.sessions.first { $0.id == session.id }?.events
            table.add([String(session.id), session.name, session.state.rawValue, session.device ?? session.boundDevice.map { "(\($0))" } ?? "-",
                       session.testUser ?? "-", String(session.events), rate(session.events, before)])
        }
        text += table.render()
        return text
    }

    static func sessions(_ sessions: [SessionRecord]) -> String {
        guard !sessions.isEmpty else { return "no sessions\n" }
        var table = TextTable(["ID", "NAME", "STATE", "DEVICE", "USER", "EVENTS", "STARTED", "PATH"])
        for session in sessions {
            table.add([String(session.id), session.name, session.state.rawValue,
                       session.device ?? session.boundDevice.map { "(\($0))" } ?? "-", session.testUser ?? "-",
                       String(session.events), time(session.started ?? session.created), session.path])
        }
        return table.render()
    }

    /// Every lab's sessions in the shared database: `EVENTS` is what PostgreSQL has of what the lab stored.
    static func sharedSessions(_ sessions: [SharedSession]) -> String {
        guard !sessions.isEmpty else { return "no sessions in the shared database\n" }
        var table = TextTable(["LAB", "ID", "NAME", "STATE", "USER", "EVENTS", "STARTED", "STUDY", "UUID"])
        for session in sessions {
            let events = session.replicated >= session.events ? String(session.events) : "\(session.replicated)/\(session.events)"
            let study = session.study.map { [$0, session.iteration.map { "#\($0)" }, session.participant].compactMap { $0 }.joined(separator: " ") }
            table.add([session.lab, String(session.id), session.name, session.state, session.testUser ?? "-", events,
                       time(session.started ?? session.created), study ?? "-", session.uuid])
        }
        return table.render()
    }

    static func devices(_ devices: [DeviceRecord]) -> String {
        guard !devices.isEmpty else { return "no device has connected yet\n" }
        var table = TextTable(["DEVICE", "NAME", "MODEL", "SYSTEM", "APP", "ADDRESS", "STATE", "LAST SEEN"])
        for device in devices {
            table.add([device.id, device.name ?? "-", device.model ?? "-", device.systemVersion ?? "-",
                       [device.appId, device.appVersion].compactMap { $0 }.joined(separator: " ").nonEmpty ?? "-",
                       device.address ?? "-", device.connected.map { $0 ? "connected" : "disconnected" } ?? "-",
                       time(device.lastSeen)])
        }
        return table.render()
    }

    /// `events` as a table written a page at a time, as the pages arrive: the first page sets the
    /// column widths, so that a session of any size is printed without holding it.
    struct EventTable {
        private var widths: [Int]?

        /// Transcript segments in the same columns: no id, the device time they were said at.
        mutating func speech(_ segments: [TranscriptSegment]) -> String {
            guard !segments.isEmpty else { return "" }
            var table = TextTable(["ID", "TIME", "DEVICE", "CLASS", "SUMMARY"], widths: widths)
            for segment in segments {
                table.add(["-", time(segment.start, fractional: true), segment.device, "speech", segment.summary])
            }
            defer { widths = table.columnWidths }
            return table.render(header: widths == nil)
        }

        mutating func page(_ events: [StoredEvent]) -> String {
            guard !events.isEmpty else { return "" }
            var table = TextTable(["ID", "TIME", "DEVICE", "CLASS", "SUMMARY"], widths: widths)
            for event in events {
                table.add([String(event.id), time(event.timestamp, fractional: true) + (event.timestampEstimated ? "*" : ""),
                           event.device, event.eventClass, event.summary])
            }
            defer { widths = table.columnWidths }
            return table.render(header: widths == nil)
        }
    }

    static func time(_ seconds: Double, fractional: Bool = false) -> String {
        fractional ? DateText.milliseconds(seconds) : DateText.seconds(seconds)
    }

    static func duration(_ seconds: Double) -> String {
        let total = Int(saturating: seconds)
        return total >= 3600 ? "\(total / 3600)h\(total % 3600 / 60)m" : total >= 60 ? "\(total / 60)m\(total % 60)s" : "\(total)s"
    }
}

extension String {
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}
