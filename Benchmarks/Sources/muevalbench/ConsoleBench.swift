import BenchProfiles
import Foundation
import Glibc

/// A one-hour session recorded through muevald, then stopped: when the console offered its report,
/// and how fast its replay showed the first frame.
struct HourFigures {
    var events: Int
    var ingestSeconds: Double
    /// `stop` sent → its reply; `stop` sent → `GET /api/sessions/ID/report` said ready.
    var stopReplySeconds: Double
    var reportReadySeconds: Double?
    var reportNote = ""
    /// muevald's own log of that report: the whole report (analysis, digest, page) and, within it, the study digest.
    var reportWrittenSeconds: Double?
    /// Of that, the analysis (the journal's pass and the interpreters' rounds); the rest writes the page.
    var reportAnalysisSeconds: Double?
    var digestSeconds: Double?
    /// The replay index from this process (no browser): what the page reads first (`GET
    /// /api/sessions/ID/replay/index` with `Range: bytes=0-262143`: the head and the first chunks), seconds
    /// and the file's bytes; and the one JSON of `GET /api/sessions/ID/replay`, seconds and bytes.
    var replayHead: (seconds: Double, fileBytes: Int)?
    var replayIndex: (seconds: Double, bytes: Int)?
    var replay: ReplayFigures?
    var replayNote = ""
}

/// What the replay script measured in headless Chromium.
struct ReplayFigures {
    /// navigationStart → `performance.mark('replay-first-frame')`, or the script's stand-in when the page has no mark.
    var firstFrameMilliseconds: Double
    var measuredBy: String
    var heapBytes: Int
    var detail: String
}

/// Ingest of the same events with and without a browser that opened the live stream and never reads.
struct StallFigures {
    var events: Int
    var connections: Int
    /// Seconds per pair of runs, alternating.
    var pairs: [(plain: Double, stalled: Double)] = []
    var plainPeakRSS = 0
    var stalledPeakRSS = 0
    /// What the stalled reader got once it read, after the last run: events, and events reported skipped.
    var stalledReceived = 0
    var stalledSkipped = 0
    var note = ""

    var ratio: Double? {
        guard !pairs.isEmpty else { return nil }
        let ratios = pairs.map { $0.stalled / $0.plain }.sorted()
        return ratios[ratios.count / 2]
    }
}

/// The web console's benchmarks (issue 15), each against a fresh muevald.
extension EndToEnd {
    /// `sessions` sessions of one device each, one connection per device, at `eventsPerSecond` in all;
    /// a WebSocket per session on `/api/sessions/ID/live` stamps every event's arrival against `received`.
    func consoleLive(sessions count: Int, eventsPerSecond: Double, seconds: Double) throws -> RunResult {
        let daemon = try Daemon(executable: muevald)
        defer { daemon.stop() }
        let sessions = try (0..<count).map { try daemon.startSession(name: "bench-live-\($0)", device: LoadGenerator.deviceID($0)) }
        let cookie = try daemon.consoleCookie()
        var plan = LoadPlan(profile: .touch, connections: count, eventsPerConnection: Int(eventsPerSecond * seconds * scale) / count,
                            rate: eventsPerSecond, untilAcknowledged: true, timeout: seconds * scale + 60)
        plan.devices = count
        plan.follow = sessions.map { .live(port: daemon.consolePort, session: $0.id, cookie: cookie) }
        return try measure(plan, on: daemon, sessions: sessions)
    }

    /// Records the hour profile flat out, stops the session and polls its report; then the replay script.
    func hourSession(replayScript: String?) throws -> HourFigures {
        let daemon = try Daemon(executable: muevald)
        defer { daemon.stop() }
        let session = try daemon.startSession(name: "bench-hour")
        let profile = LoadProfile.hour
        let events = Int(Double(profile.templates.count) * scale)
        let plan = LoadPlan(profile: profile, connections: 1, eventsPerConnection: events, rate: nil, untilAcknowledged: true, timeout: 600)
        let outcome = try LoadGenerator.run(plan, port: daemon.port)
        guard !outcome.timedOut, try daemon.counters()["eventsStored"] == events else {
            throw BenchError("the hour was not stored: \(try daemon.counters()["eventsStored"] ?? -1) of \(events) events")
        }
        let cookie = try daemon.consoleCookie()
        let stop = wallClock()
        try daemon.stopSession(session.id)
        var figures = HourFigures(events: events, ingestSeconds: outcome.end - outcome.start,
                                  stopReplySeconds: wallClock() - stop)
        while wallClock() < stop + 120 {
            let reply = try ConsoleHTTP.get(port: daemon.consolePort, path: "/api/sessions/\(session.id)/report", cookie: cookie)
            let state = (try? JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any])?["state"] as? String
            if state == "ready" {
                figures.reportReadySeconds = wallClock() - stop
                break
            }
            if state == "failed" || reply.status != 200 {
                figures.reportNote = "report failed: \(String(decoding: reply.body, as: UTF8.self))"
                break
            }
            usleep(20_000)
        }
        if figures.reportReadySeconds == nil, figures.reportNote.isEmpty { figures.reportNote = "no report within 120 s" }
        let log = (try? String(contentsOfFile: daemon.directory + "/muevald.log", encoding: .utf8)) ?? ""
        let written = "report of session \(session.id) (default) written in "
        figures.reportWrittenSeconds = Self.loggedSeconds(in: log, after: written)
        if let line = log.range(of: written, options: .backwards) {
            figures.reportAnalysisSeconds = Self.loggedSeconds(in: String(log[line.upperBound...].prefix { $0 != "\n" }), after: "(analysis ")
        }
        figures.digestSeconds = Self.loggedSeconds(in: log, after: "digest of session \(session.id) stored in ")
        var asked = wallClock()
        let head = try ConsoleHTTP.get(port: daemon.consolePort, path: "/api/sessions/\(session.id)/replay/index", cookie: cookie,
                                       headers: ["Range: bytes=0-262143"])
        if head.status == 206, let range = head.headers.first(where: { $0.lowercased().hasPrefix("content-range:") }),
           let total = range.split(separator: "/").last.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) {
            figures.replayHead = (wallClock() - asked, total)
        }
        asked = wallClock()
        let index = try ConsoleHTTP.get(port: daemon.consolePort, path: "/api/sessions/\(session.id)/replay", cookie: cookie)
        if index.status == 200 { figures.replayIndex = (wallClock() - asked, index.body.count) }
        do {
            figures.replay = try ReplayBrowser.measure(script: replayScript, link: try daemon.consoleLink(), session: session.id)
        } catch {
            figures.replayNote = "\(error)"
        }
        return figures
    }

    /// The seconds of the last log line with `prefix`, as SessionReports logs them ("… written in 1.23 s").
    static func loggedSeconds(in log: String, after prefix: String) -> Double? {
        guard let range = log.range(of: prefix, options: .backwards) else { return nil }
        return Double(log[range.upperBound...].prefix { $0.isNumber || $0 == "." })
    }

    /// `pairs` pairs of runs, alternating: `events` touch events flat out over `connections`, without and with a
    /// live WebSocket that upgrades and never reads (SO_RCVBUF 4 KB).
    func stall(events: Int, connections: Int, pairs: Int) throws -> StallFigures {
        var figures = StallFigures(events: Int(Double(events) * scale), connections: connections)
        for pair in 0..<pairs {
            let plain = try ingest(events: figures.events, connections: connections, stalled: false)
            let stalled = try ingest(events: figures.events, connections: connections, stalled: true, drain: pair == pairs - 1)
            figures.pairs.append((plain.seconds, stalled.seconds))
            figures.plainPeakRSS = max(figures.plainPeakRSS, plain.peakRSS)
            figures.stalledPeakRSS = max(figures.stalledPeakRSS, stalled.peakRSS)
            if let drained = stalled.drained { (figures.stalledReceived, figures.stalledSkipped) = drained }
            figures.note = [plain.note, stalled.note].filter { !$0.isEmpty }.joined(separator: "; ")
        }
        return figures
    }

    private func ingest(events: Int, connections: Int, stalled: Bool, drain: Bool = false)
        throws -> (seconds: Double, peakRSS: Int, drained: (Int, Int)?, note: String) {
        let daemon = try Daemon(executable: muevald)
        defer { daemon.stop() }
        let session = try daemon.startSession(name: stalled ? "bench-stalled" : "bench-plain")
        let reader = stalled ? try LiveReader(port: daemon.consolePort, session: session.id, cookie: try daemon.consoleCookie(),
                                              receiveBuffer: 4096) : nil
        defer { reader?.close() }
        let plan = LoadPlan(profile: .touch, connections: connections, eventsPerConnection: events / connections, rate: nil,
                            untilAcknowledged: true, timeout: 120)
        let outcome = try LoadGenerator.run(plan, port: daemon.port)
        let stored = try daemon.counters()["eventsStored"] ?? -1
        let note = outcome.timedOut ? "timed out" : stored != outcome.events ? "\(stored) of \(outcome.events) stored" : ""
        var drained: (Int, Int)?
        if drain, let reader {
            // Now the browser reads: what reaches it, and what it is told it missed, should add up to every event.
            var entry = [pollfd(fd: reader.fd, events: Int16(POLLIN), revents: 0)]
            let deadline = wallClock() + 10
            while reader.delays.count + reader.skipped < outcome.events, wallClock() < deadline {
                if poll(&entry, 1, 50) > 0 { reader.read(now: wallClock()) }
            }
            drained = (reader.delays.count, reader.skipped)
        }
        return (outcome.end - outcome.start, daemon.stats.peakRSS(), drained, note)
    }
}

/// Runs Benchmarks/replay_first_frame.py (Selenium with Debian's chromium and chromedriver) and reads its JSON line.
enum ReplayBrowser {
    static func measure(script: String?, link: String, session: Int64) throws -> ReplayFigures {
        guard let script, FileManager.default.fileExists(atPath: script) else {
            throw BenchError("not measured: no replay script (muevalbench run --replay-script Benchmarks/replay_first_frame.py)")
        }
        // Debian's python3, where python3-selenium is; a python3 first on PATH (pyenv, a venv) may lack it.
        let python = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : "python3"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [python, script, "--link", link, "--session", String(session)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        guard let json = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw BenchError("not measured: the replay script printed no result (status \(process.terminationStatus))")
        }
        if let skipped = json["skipped"] as? String { throw BenchError("not measured: \(skipped)") }
        guard let milliseconds = (json["firstFrameMs"] as? NSNumber)?.doubleValue else {
            throw BenchError("not measured: \(json["error"] as? String ?? line)")
        }
        return ReplayFigures(firstFrameMilliseconds: milliseconds, measuredBy: json["measuredBy"] as? String ?? "?",
                             heapBytes: (json["usedJSHeapSize"] as? NSNumber)?.intValue ?? 0, detail: json["detail"] as? String ?? "")
    }
}
