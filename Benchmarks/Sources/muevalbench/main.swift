import BenchProfiles
import Foundation
import Glibc
import WireProtocol

// muevalbench run --muevald PATH [--scale F] [--connections 1,4,32,256] [--profiles touch,mixed]
//                 [--sections flat,steady,idle,thesis,console] [--replay-script Benchmarks/replay_first_frame.py]
//                 [--thesis-stack Benchmarks/thesis_stack_bench.py]
//                 [--micro FILE] [--report FILE] [--study FILE] [--out docs/BENCHMARKS.md] [--command "make bench"]
// muevalbench sink --port PORT          (started by `run`: the bound's server)
// muevalbench decode [--profile touch] [--seconds 5]   (decoding alone, in a loop: for perf record)

let usage = "usage: muevalbench run --muevald PATH [--scale F] [--connections LIST] [--profiles LIST] [--sections LIST] [--replay-script FILE] [--thesis-stack FILE] [--micro FILE] [--report FILE] [--study FILE] [--out FILE] [--command TEXT] | muevalbench sink --port PORT"

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    return arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}

func readIfPresent(_ path: String?) -> String? {
    guard let path, let text = try? String(contentsOfFile: path, encoding: .utf8),
          !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return nil }
    return text.trimmingCharacters(in: .whitespacesAndNewlines)
}

// A sender closing early must not kill this process; and 1,000 connections need descriptors.
signal(SIGPIPE, SIG_IGN)
var limit = rlimit()
getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
limit.rlim_cur = limit.rlim_max
setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)

switch CommandLine.arguments.dropFirst().first {
case "sink":
    guard let port = option("--port").flatMap(UInt16.init) else { fatalError(usage) }
    try SinkServer.run(port: port)
case "decode":
    let profile = LoadProfile.named(option("--profile") ?? "touch") ?? .touch
    let seconds = option("--seconds").flatMap(Double.init) ?? 5
    let bytes = profile.stream(count: 1_000)
    let clock = ContinuousClock()
    let start = clock.now
    var (rounds, events) = (0, 0)
    while clock.now - start < .seconds(seconds) {
        var decoder = WireDecoder()
        decoder.append(bytes)
        while let result = decoder.next() {
            if case .success(.event) = result { events += 1 }
        }
        rounds += 1
    }
    let elapsed = Double((clock.now - start).components.attoseconds) / 1e18 + Double((clock.now - start).components.seconds)
    print(String(format: "%@: %.0f events/s, %.1f MB/s on one core", profile.name, Double(events) / elapsed,
                 Double(rounds * bytes.count) / elapsed / 1e6))
case "run":
    guard let muevald = option("--muevald") else {
        FileHandle.standardError.write(Data("\(usage)\n".utf8))
        exit(64)
    }
    let bench = EndToEnd(muevald: muevald, scale: option("--scale").flatMap(Double.init) ?? 1)
    let connections = (option("--connections") ?? "1,4,32,256").split(separator: ",").compactMap { Int($0) }
    let profiles = (option("--profiles") ?? "touch,mixed").split(separator: ",").compactMap { LoadProfile.named(String($0)) }
    // A part of the runs while developing; `--out` then writes only those parts' figures.
    let sections = Set((option("--sections") ?? "flat,steady,idle,thesis,console").split(separator: ",").map(String.init))
    var report = BenchReport(command: option("--command") ?? CommandLine.arguments.joined(separator: " "), loadBefore: Machine.load)
    report.micro = readIfPresent(option("--micro"))
    report.report = readIfPresent(option("--report"))
    report.study = readIfPresent(option("--study"))
    func log(_ text: String) { FileHandle.standardError.write(Data("muevalbench: \(text)\n".utf8)) }

    for profile in profiles where sections.contains("flat") {
        for count in connections {
            log("\(profile.name), \(count) connections: bound")
            let bound = try bench.flatOut(profile, connections: count, server: "sink")
            log("\(profile.name), \(count) connections: muevald")
            let run = try bench.flatOut(profile, connections: count, server: "muevald")
            log(String(format: "  %.0f events/s, %.1f MB/s (bound %.1f MB/s), muevald %.2f µs CPU per event",
                       run.eventsPerSecond, run.megabytesPerSecond, bound.megabytesPerSecond, run.serverMicrosecondsPerEvent))
            report.flatOut.append((run, bound))
        }
    }
    if sections.contains("steady"), profiles.contains(where: { $0.name == "touch" }) {
        for count in [4, 32] where connections.contains(count) {
            log("touch, \(count) connections at 50,000 events/s with a tail")
            report.rateLimited.append(try bench.rateLimited(.touch, connections: count, eventsPerSecond: 50_000, seconds: 10))
        }
    }
    if sections.contains("idle") {
        log("1,000 idle connections")
        let idle = try bench.idle(connections: 1000)
        report.idle = (1000, idle.rss, idle.peak)
    }
    if sections.contains("thesis"), let script = option("--thesis-stack") {
        log("touch, 1 connection: muevald and the thesis-style stack (\(script)), the same events")
        let comparison = try bench.thesisComparison(script: script, events: 200_000)
        log(String(format: "  muevald %.0f events/s, %.2f µs CPU per event; thesis stack %.0f events/s, %.2f µs CPU per event",
                   comparison.muevald.eventsPerSecond, comparison.muevald.serverMicrosecondsPerEvent,
                   comparison.thesis.eventsPerSecond, comparison.thesis.serverMicrosecondsPerEvent))
        log(comparison.line)
        report.thesis = comparison
    }
    // `console-live`: the live runs alone, `console-hour` the hour's stop alone (A/B runs while developing).
    let live = sections.contains("console") || sections.contains("console-live")
    let hour = sections.contains("console") || sections.contains("console-hour")
    if live || hour {
        var console = ConsoleReport()
        // 16 sessions five times: one run's p99 moves with the neighbours' load on these machines, the median less.
        for sessions in live ? [4] + Array(repeating: 16, count: ConsoleReport.sixteenRuns) : [] {
            log("console: \(sessions) sessions at 50,000 events/s in all, a live WebSocket each")
            let run = try bench.consoleLive(sessions: sessions, eventsPerSecond: 50_000, seconds: 10)
            log(String(format: "  receipt→browser p99 %.1f ms, %d skipped", run.tail?.p99 ?? -1, run.tailSkipped))
            console.live.append((sessions, run))
        }
        if hour {
            log("console: a one-hour session, stopped; its report and replay")
            console.hour = try bench.hourSession(replayScript: option("--replay-script"))
        }
        if sections.contains("console") {
            log("console: 100,000 events with and without a stalled WebSocket")
            console.stall = try bench.stall(events: 100_000, connections: 4, pairs: 3)
        }
        report.console = console
    }
    report.loadAfter = Machine.load
    print(report.markdown)
    if let out = option("--out") {
        try report.write(to: out)
        log("written to \(out)")
    }
default:
    FileHandle.standardError.write(Data("\(usage)\n".utf8))
    exit(64)
}
