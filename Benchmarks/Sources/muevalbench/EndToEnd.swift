import BenchProfiles
import Foundation
import Glibc

/// One run's figures.
struct RunResult {
    var profile: String
    var connections: Int
    var server: String
    var events: Int
    var bytes: Int
    var seconds: Double
    var serverCPU: Double
    var senderCPU: Double
    var peakRSS: Int
    var durable: Percentiles?
    var tail: Percentiles?
    var tailSkipped = 0
    var note = ""

    var eventsPerSecond: Double { Double(events) / seconds }
    var megabytesPerSecond: Double { Double(bytes) / seconds / 1e6 }
    /// The server's CPU time per event (all its threads, user and system), in microseconds: steadier
    /// than events/s on a shared machine, since it leaves out the time spent waiting for a core.
    var serverMicrosecondsPerEvent: Double { events > 0 ? serverCPU * seconds / Double(events) * 1e6 : 0 }
}

/// The end-to-end runs: each against a fresh muevald (or sink), from this process's load generator.
struct EndToEnd {
    let muevald: String
    /// Multiplies every event count (a quick look while developing: 0.1).
    let scale: Double

    /// Bytes per flat-out run, whatever the number of connections.
    private static let touchEvents = 1_200_000
    private static let mixedBytes = 600_000_000.0

    func flatOut(_ profile: LoadProfile, connections: Int, server kind: String) throws -> RunResult {
        let total = profile.name == "touch" ? Double(Self.touchEvents) : Self.mixedBytes / profile.meanEventBytes
        let perConnection = max(1, Int(total * scale) / connections)
        let plan = LoadPlan(profile: profile, connections: connections, eventsPerConnection: perConnection, rate: nil,
                            untilAcknowledged: kind == "muevald", timeout: 120)
        return try run(plan, server: kind)
    }

    /// A steady offered load with a live tail following the session.
    func rateLimited(_ profile: LoadProfile, connections: Int, eventsPerSecond: Double, seconds: Double) throws -> RunResult {
        let perConnection = Int(eventsPerSecond * seconds * scale) / connections
        let plan = LoadPlan(profile: profile, connections: connections, eventsPerConnection: perConnection,
                            rate: eventsPerSecond, untilAcknowledged: true, timeout: seconds * scale + 60)
        return try run(plan, server: "muevald", withTail: true)
    }

    private func run(_ plan: LoadPlan, server kind: String, withTail: Bool = false) throws -> RunResult {
        guard kind == "muevald" else {
            let sink = try Sink()
            defer { sink.stop() }
            return try measure(plan, on: sink)
        }
        let daemon = try Daemon(executable: muevald)
        defer { daemon.stop() }
        let session = try daemon.startSession(name: "bench")
        var plan = plan
        if withTail { plan.follow = [.tail(socket: daemon.socket, session: session.id)] }
        return try measure(plan, on: daemon, sessions: [session])
    }

    /// Runs `plan` against `server`; for muevald, receipt→durable from the `sessions`' files, and the
    /// followers' delays when the plan has followers.
    func measure(_ plan: LoadPlan, on server: ServerUnderTest, sessions: [(id: Int64, path: String)] = []) throws -> RunResult {
        let me = ProcessStats(pid: getpid())
        let (serverBefore, senderBefore) = (server.stats.cpuSeconds(), me.cpuSeconds())
        let outcome = try LoadGenerator.run(plan, port: server.port)
        let (serverAfter, senderAfter) = (server.stats.cpuSeconds(), me.cpuSeconds())
        let seconds = outcome.end - outcome.start
        let name = server is Daemon ? "muevald" : server is ThesisStack ? "thesis stack" : "sink"
        var result = RunResult(profile: plan.profile.name, connections: plan.connections, server: name,
                               events: outcome.events, bytes: outcome.bytes, seconds: seconds,
                               serverCPU: (serverAfter - serverBefore) / seconds, senderCPU: (senderAfter - senderBefore) / seconds,
                               peakRSS: server.stats.peakRSS())
        var notes: [String] = []
        if outcome.timedOut { notes.append("timed out after \(Int(plan.timeout)) s") }
        notes += outcome.errors.prefix(1)
        if let daemon = server as? Daemon {
            result.durable = Percentiles(seconds: try sessions.flatMap { try DurableLatency.measure(sessionFile: $0.path, acks: outcome.acks) })
            let stored = try daemon.counters()["eventsStored"] ?? -1
            if stored != outcome.events { notes.append("\(stored) of \(outcome.events) events stored") }
        }
        if !plan.follow.isEmpty {
            result.tail = Percentiles(seconds: outcome.tailDelays)
            result.tailSkipped = outcome.tailSkipped
            let missing = outcome.events - outcome.tailDelays.count - outcome.tailSkipped
            if missing > 0 { notes.append("\(missing) events neither received nor reported skipped") }
        }
        result.note = notes.joined(separator: "; ")
        return result
    }

    /// muevald and the thesis-style stack (`script`), each fresh, fed the same `events` touch events over
    /// one connection by the same sender, each run done when the last event is acknowledged (durable).
    func thesisComparison(script: String, events: Int) throws -> ThesisComparison {
        let plan = LoadPlan(profile: .touch, connections: 1, eventsPerConnection: max(1, Int(Double(events) * scale)),
                            rate: nil, untilAcknowledged: true, timeout: 600)
        let muevald = try run(plan, server: "muevald")
        let stack = try ThesisStack(script: script)
        defer { stack.stop() }
        var thesis = try measure(plan, on: stack)
        let summary = stack.finish()
        if !summary.contains("\(thesis.events) events stored") {
            thesis.note = [thesis.note, "its own count: \(summary)"].filter { !$0.isEmpty }.joined(separator: "; ")
        }
        return ThesisComparison(muevald: muevald, thesis: thesis, summary: summary)
    }

    /// Resident memory of muevald holding `count` connections that said hello and then nothing.
    func idle(connections count: Int) throws -> (rss: Int, peak: Int) {
        let daemon = try Daemon(executable: muevald)
        defer { daemon.stop() }
        _ = try daemon.startSession(name: "bench-idle")
        var descriptors: [Int32] = []
        defer { descriptors.forEach { close($0) } }
        for index in 0..<count {
            let fd = try Sockets.connect(port: daemon.port, source: UInt8(1 + index % 8))
            try Sockets.writeAll(fd, LoadGenerator.hello)
            descriptors.append(fd)
        }
        try waitUntil(seconds: 30, "\(count) open connections") { try daemon.counters()["connectionsOpen"] == count }
        sleep(2)
        return (daemon.stats.currentRSS(), daemon.stats.peakRSS())
    }
}

/// muevald next to the thesis-style stack, the same events and sender (issue 41).
struct ThesisComparison {
    var muevald: RunResult
    var thesis: RunResult
    /// The stack's own line ("thesis stack: N events stored, …").
    var summary: String

    var speedup: Double { muevald.eventsPerSecond / thesis.eventsPerSecond }
    var cpuRatio: Double { thesis.serverMicrosecondsPerEvent / muevald.serverMicrosecondsPerEvent }

    /// "muevald / thesis stack: N× events/s, M× less CPU per event".
    var line: String {
        "muevald / thesis stack: \(BenchReport.fixed(speedup, 1))× events/s, \(BenchReport.fixed(cpuRatio, 1))× less CPU per event"
    }
}
