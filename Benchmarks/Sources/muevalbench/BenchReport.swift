import BenchProfiles
import Foundation

/// The figures of one `make bench` as markdown: printed, and written between the markers of
/// docs/BENCHMARKS.md so that the prose around them (where the time goes) stays.
struct BenchReport {
    var command: String
    var loadBefore: String
    var loadAfter = ""
    var started = Date()
    var flatOut: [(muevald: RunResult, bound: RunResult)] = []
    var rateLimited: [RunResult] = []
    var idle: (connections: Int, rss: Int, peak: Int)?
    /// muevald next to the thesis-style stack (issue 41); nil when not run.
    var thesis: ThesisComparison?
    var console: ConsoleReport?
    var micro: String?
    var report: String?
    /// `ReportBenchmark study`'s output: the study report of 40 synthetic one-hour sessions.
    var study: String?

    static let begin = "<!-- make bench: begin (generated, do not edit by hand) -->"
    static let end = "<!-- make bench: end -->"

    var markdown: String {
        var out = """
            \(Self.begin)
            Measured \(ISO8601DateFormatter().string(from: started)) by `\(command)` on \(Machine.cpuModel), \
            \(Machine.cores) cores, \(Machine.memory), Linux \(Machine.kernel). Load average (1, 5, 15 min) \
            before: \(loadBefore); after: \(loadAfter).

            Profiles: **touch**: \(LoadProfile.touch.summary), \(Int(LoadProfile.touch.meanEventBytes.rounded())) bytes \
            each; **mixed**: \(LoadProfile.mixed.summary), \(Int(LoadProfile.mixed.meanEventBytes.rounded())) bytes per \
            event on average.

            ### End to end, as fast as the server takes it

            One session; N connections of one device (disjoint seqs) over loopback TCP; the clock runs from the \
            first event to the last `<ack>` (every event durable: committed with `synchronous = full`). \
            *Bound*: the same bytes over the same number of connections into a sink that reads and discards. \
            CPU is seconds of CPU per second of wall time (2.0 = both cores) from /proc/PID/stat, and the same \
            CPU time divided by the events (all of muevald's threads, user and system); the sender \
            (this benchmark) shares the machine. Receipt→durable is `received` to the `<ack>` covering the \
            event (an upper bound of receipt→commit).

            | profile | conns | events/s | MB/s | bound MB/s | of bound | muevald CPU | muevald CPU µs/event | sender CPU | peak RSS | receipt→durable p50 / p99 | note |
            |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|

            """
        for (run, bound) in flatOut {
            out += "| \(run.profile) | \(run.connections) | \(Self.int(run.eventsPerSecond)) | \(Self.fixed(run.megabytesPerSecond, 1)) | "
            out += "\(Self.fixed(bound.megabytesPerSecond, 1)) | \(Self.fixed(100 * run.megabytesPerSecond / bound.megabytesPerSecond, 0)) % | "
            out += "\(Self.fixed(run.serverCPU, 2)) | \(Self.fixed(run.serverMicrosecondsPerEvent, 2)) | \(Self.fixed(run.senderCPU, 2)) | \(Self.megabytes(run.peakRSS)) | "
            out += "\(Self.latency(run.durable)) | \([run.note, bound.note].filter { !$0.isEmpty }.joined(separator: "; ")) |\n"
        }
        out += """

            ### End to end at a steady rate, with a live tail

            The sender paces events evenly; a tail reader on the control socket (the `tail` request that \
            `muevalctl tail --json` makes) stamps each event line as it arrives and compares it with `received`.

            | profile | conns | offered events/s | achieved events/s | receipt→durable p50 / p99 / max | receipt→tail p50 / p99 / max | tail lines skipped | muevald CPU | sender and tail CPU | peak RSS | note |
            |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|

            """
        for run in rateLimited {
            out += "| \(run.profile) | \(run.connections) | 50,000 | \(Self.int(run.eventsPerSecond)) | \(Self.latency(run.durable, max: true)) | "
            out += "\(Self.latency(run.tail, max: true)) | \(run.tailSkipped) | \(Self.fixed(run.serverCPU, 2)) | \(Self.fixed(run.senderCPU, 2)) | \(Self.megabytes(run.peakRSS)) | \(run.note) |\n"
        }
        if let idle {
            out += """

                ### Idle connections

                \(idle.connections) connections (from 8 loopback addresses) that said hello and send nothing: muevald's \
                resident memory \(Self.megabytes(idle.rss)) after 2 s, peak \(Self.megabytes(idle.peak)).

                """
        }
        if let thesis { out += Self.thesisMarkdown(thesis) }
        if let console { out += console.markdown }
        out += "\n### Micro: one core\n\n" + (micro ?? "not measured: the micro benchmarks did not run (see make bench's output)") + "\n"
        out += "\n### Analysis: report for a one-hour session\n\n"
        out += report.map { "`ReportBenchmark` (Sources/ReportBenchmark, synthetic hour):\n\n```\n\($0)\n```\n" }
            ?? "not measured: the report benchmark (Sources/ReportBenchmark) did not build or run\n"
        out += "\n### Analysis: study report for 2 iterations × 20 participants × one hour\n\n"
        out += study.map { "`ReportBenchmark study` (Sources/ReportBenchmark, synthetic study; analysis and report in a child process, its peak RSS):\n\n```\n\($0)\n```\n" }
            ?? "not measured: the study report benchmark (`ReportBenchmark study`) did not build or run\n"
        out += "\n### Targets\n\n" + targets + "\n" + Self.end + "\n"
        return out
    }

    private var targets: String {
        var rows = ["| target | measured | |", "|---|---|---|"]
        let touch = flatOut.map(\.muevald).filter { $0.profile == "touch" && (4...32).contains($0.connections) }
        if let best = touch.map(\.eventsPerSecond).max() {
            rows.append("| touch, durable, 4–32 connections ≥ 300,000 events/s | \(Self.int(best)) events/s (best) | \(best >= 300_000 ? "met" : "missed") |")
        }
        if let one = flatOut.map(\.muevald).first(where: { $0.profile == "touch" && $0.connections == 1 }) {
            let cpu = one.serverMicrosecondsPerEvent
            rows.append("| touch, durable, 1 connection: muevald CPU ≤ 4.7 µs per event | \(Self.fixed(cpu, 2)) µs per event | \(cpu <= 4.7 ? "met" : "missed") |")
        }
        if let thesis {
            rows.append("| touch, durable, 1 connection: ≥ 30× a thesis-style stack | \(Self.fixed(thesis.speedup, 1))× events/s, "
                        + "\(Self.fixed(thesis.cpuRatio, 1))× less CPU per event | \(thesis.speedup >= 30 ? "met" : "missed") |")
        }
        if let best = flatOut.map(\.muevald).filter({ $0.profile == "mixed" }).map(\.megabytesPerSecond).max() {
            rows.append("| mixed ≥ 150 MB/s | \(Self.fixed(best, 1)) MB/s (best) | \(best >= 150 ? "met" : "missed") |")
        }
        if let worst = rateLimited.compactMap(\.durable?.p99).max() {
            rows.append("| p99 receipt→durable ≤ 100 ms at 50,000 events/s | \(Self.fixed(worst, 1)) ms (worst) | \(worst <= 100 ? "met" : "missed") |")
        }
        if let worst = rateLimited.compactMap(\.tail?.p99).max() {
            rows.append("| p99 receipt→tail ≤ 50 ms at 50,000 events/s | \(Self.fixed(worst, 1)) ms (worst) | \(worst <= 50 ? "met" : "missed") |")
        }
        if let worst = flatOut.map(\.muevald).filter({ $0.connections == 256 }).map(\.peakRSS).max() {
            rows.append("| peak RSS ≤ 200 MB, 256 connections flat out | \(Self.megabytes(worst)) (worst profile) | \(worst <= 200_000_000 ? "met" : "missed") |")
        }
        if let idle {
            rows.append("| peak RSS ≤ 150 MB, \(idle.connections) idle connections | \(Self.megabytes(idle.peak)) | \(idle.peak <= 150_000_000 ? "met" : "missed") |")
        }
        if let console { rows += console.targets }
        rows.append("| report for a one-hour session ≤ 10 s | \(report.flatMap(Self.reportTotal) ?? "not measured") | "
                    + "\(report.flatMap(Self.reportTotal).flatMap { Double($0.prefix { $0 != " " }) }.map { $0 <= 10 ? "met" : "missed" } ?? "") |")
        // Issue 41: from the digests the sessions stored at their stop (ReportBenchmark study's `total:`).
        rows.append("| study report for 40 sessions of one hour ≤ 10 s | \(study.flatMap(Self.reportTotal) ?? "not measured") | "
                    + "\(study.flatMap(Self.reportTotal).flatMap { Double($0.prefix { $0 != " " }) }.map { $0 <= 10 ? "met" : "missed" } ?? "") |")
        return rows.joined(separator: "\n") + "\n"
    }

    private static func thesisMarkdown(_ thesis: ThesisComparison) -> String {
        var out = """

            ### muevald next to a thesis-style stack

            The thesis's server played by `Benchmarks/thesis_stack_bench.py` (Debian's /usr/bin/python3, standard \
            library only: each socket read's XML messages parsed with xml.etree into dicts, stored in one SQLite \
            transaction with `synchronous = FULL` and WAL, then acknowledged); the same touch events from the same \
            sender over one connection, each run done at the last `<ack>` (durable). CPU from /proc/PID/stat.

            | server | events | events/s | CPU | CPU µs/event | peak RSS | note |
            |---|--:|--:|--:|--:|--:|---|

            """
        for run in [thesis.muevald, thesis.thesis] {
            out += "| \(run.server) | \(int(Double(run.events))) | \(int(run.eventsPerSecond)) | \(fixed(run.serverCPU, 2)) | "
            out += "\(fixed(run.serverMicrosecondsPerEvent, 2)) | \(megabytes(run.peakRSS)) | \(run.note) |\n"
        }
        out += "\n**\(thesis.line)**. The stack's own count: \(thesis.summary.isEmpty ? "none (it printed nothing)" : thesis.summary).\n"
        return out
    }

    /// "total:    3.21 s (limit 10 s)" → "3.21 s".
    private static func reportTotal(_ text: String) -> String? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("total:") }) else { return nil }
        return line.dropFirst("total:".count).trimmingCharacters(in: .whitespaces).components(separatedBy: " (").first
    }

    /// Replaces the generated part of `path`, keeping what is around it; creates the file if needed.
    func write(to path: String) throws {
        var text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "# Benchmarks\n\n`make bench` writes the figures below.\n\n"
        if let start = text.range(of: Self.begin), let stop = text.range(of: Self.end + "\n", range: start.upperBound..<text.endIndex) {
            text.replaceSubrange(start.lowerBound..<stop.upperBound, with: markdown)
        } else {
            text += markdown
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    static func int(_ value: Double) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.maximumFractionDigits = 0
        return formatter.string(from: NSNumber(value: value.rounded())) ?? "\(Int(value))"
    }

    static func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
    static func megabytes(_ bytes: Int) -> String { "\(fixed(Double(bytes) / 1e6, 0)) MB" }

    static func latency(_ percentiles: Percentiles?, max: Bool = false) -> String {
        guard let p = percentiles else { return "–" }
        return "\(fixed(p.p50, 1)) / \(fixed(p.p99, 1))\(max ? " / \(fixed(p.max, 1))" : "") ms"
    }
}

/// The web console's figures (issue 15): live stream latency, report after stop, replay, stalled browser.
struct ConsoleReport {
    /// Runs of 16 sessions: the target is their median p99 (issue 41).
    static let sixteenRuns = 5
    var live: [(sessions: Int, run: RunResult)] = []
    var hour: HourFigures?
    var stall: StallFigures?

    typealias Format = BenchReport

    var markdown: String {
        var out = """

            ### Web console

            **Live stream** (`/api/sessions/ID/live`): N sessions of one device each, one connection per device, \
            50,000 touch events/s in all, paced; one WebSocket per session (a raw-socket client logged in through \
            a `muevalctl console` link) stamps every event of each `events` message as it arrives and compares it \
            with the event's `received`. Receipt→browser is an upper bound of the issue's commit→browser (it adds \
            receipt→commit). Skipped: what `{"type":"skipped"}` messages reported.

            | sessions | offered events/s | achieved events/s | receipt→durable p50 / p99 / max | receipt→browser p50 / p99 / max | skipped | muevald CPU | sender and browsers CPU | peak RSS | note |
            |--:|--:|--:|--:|--:|--:|--:|--:|--:|---|

            """
        for (sessions, run) in live {
            out += "| \(sessions) | 50,000 | \(Format.int(run.eventsPerSecond)) | \(Format.latency(run.durable, max: true)) | "
            out += "\(Format.latency(run.tail, max: true)) | \(run.tailSkipped) | \(Format.fixed(run.serverCPU, 2)) | "
            out += "\(Format.fixed(run.senderCPU, 2)) | \(Format.megabytes(run.peakRSS)) | \(run.note) |\n"
        }
        if let median = sixteenMedian {
            out += "\n16 sessions, p99 receipt→browser of each run: \(sixteenP99s.map { Format.fixed($0, 1) }.joined(separator: ", ")) ms; "
            out += "**median \(Format.fixed(median, 1)) ms** (messages batched per `console.live_batch_ms`).\n"
        }
        if let hour {
            out += """

                **A one-hour session, stopped** (profile *hour*: \(LoadProfile.hour.summary)): recorded through \
                muevald flat out over one connection (\(Format.int(Double(hour.events))) events in \
                \(Format.fixed(hour.ingestSeconds, 2)) s), then `stop` on the control socket (what `muevalctl stop` \
                sends; it replied after \(Format.fixed(hour.stopReplySeconds, 2)) s), then \
                `GET /api/sessions/ID/report` every 20 ms with the console cookie: **report offered \
                \(hour.reportReadySeconds.map { Format.fixed($0, 2) + " s" } ?? "never: " + hour.reportNote) after the stop** \
                (muevald's log: report written in \(hour.reportWrittenSeconds.map { Format.fixed($0, 2) + " s" } ?? "not logged"), \
                of which the analysis \(hour.reportAnalysisSeconds.map { Format.fixed($0, 2) + " s" } ?? "not logged") \
                and the study digest \(hour.digestSeconds.map { Format.fixed($0, 3) + " s" } ?? "not logged")).

                **Replay** of that session in headless Chromium (Benchmarks/replay_first_frame.py: Selenium, Debian's \
                chromium and chromedriver): \(replayText(hour)). From the benchmark, no browser: what the page reads \
                first, the index's head and first chunks (`GET /api/sessions/ID/replay/index`, `Range: bytes=0-262143`), \
                \(hour.replayHead.map { "\(Format.fixed($0.seconds * 1000, 0)) ms (the file: \(Format.fixed(Double($0.fileBytes) / 1e6, 1)) MB)" } ?? "failed"); \
                the whole index as one JSON for scripts (`GET /api/sessions/ID/replay`): \(hour.replayIndex.map { "\(Format.fixed($0.seconds * 1000, 0)) ms, \(Format.fixed(Double($0.bytes) / 1e6, 1)) MB" } ?? "failed").

                """
        }
        if let stall {
            let runs = stall.pairs.map { "\(Format.fixed($0.plain, 2)) / \(Format.fixed($0.stalled, 2)) s" }.joined(separator: ", ")
            out += """

                **Stalled browser**: \(Format.int(Double(stall.events))) touch events flat out over \(stall.connections) \
                connections to a fresh muevald, durable (last `<ack>`), without and with a WebSocket on the session's \
                live stream that upgraded (SO_RCVBUF 4 KB) and then never read; pairs alternating, without / with: \
                \(runs). Median ratio **\(stall.ratio.map { Format.fixed($0, 2) } ?? "–")×**; muevald's peak RSS \
                \(Format.megabytes(stall.plainPeakRSS)) without, \(Format.megabytes(stall.stalledPeakRSS)) with. \
                When the stalled client finally read (last run): \(Format.int(Double(stall.stalledReceived))) events \
                delivered, \(Format.int(Double(stall.stalledSkipped))) reported skipped\(stall.note.isEmpty ? "" : "; " + stall.note).

                """
        }
        return out
    }

    private func replayText(_ hour: HourFigures) -> String {
        guard let replay = hour.replay else { return hour.replayNote }
        return "navigation → first frame **\(Format.fixed(replay.firstFrameMilliseconds, 0)) ms**, measured by \(replay.measuredBy); "
            + "\(replay.detail); page JS heap (`performance.memory.usedJSHeapSize`) \(Format.megabytes(replay.heapBytes))"
    }

    /// The 16-session runs' p99 receipt→browser, in the order run.
    var sixteenP99s: [Double] { live.filter { $0.sessions == 16 }.compactMap(\.run.tail?.p99) }

    var sixteenMedian: Double? {
        let sorted = sixteenP99s.sorted()
        return sorted.isEmpty ? nil : sorted[sorted.count / 2]
    }

    var targets: [String] {
        var rows: [String] = []
        if let worst = live.compactMap(\.run.tail?.p99).max() {
            rows.append("| live: p99 commit→browser ≤ 100 ms at 50,000 events/s across sessions | \(Format.fixed(worst, 1)) ms receipt→browser (worst) | \(worst <= 100 ? "met" : "missed") |")
        }
        if let median = sixteenMedian {
            let runs = sixteenP99s.map { Format.fixed($0, 1) }.joined(separator: ", ")
            rows.append("| live: p99 receipt→browser ≤ 50 ms, 16 sessions at 50,000 events/s, median of \(Self.sixteenRuns) | \(Format.fixed(median, 1)) ms (runs: \(runs)) | \(median <= 50 ? "met" : "missed") |")
        }
        if let hour {
            let ready = hour.reportReadySeconds
            rows.append("| report offered ≤ 1 s after stopping a one-hour session | \(ready.map { Format.fixed($0, 2) + " s" } ?? "not offered") | \(ready.map { $0 <= 1 ? "met" : "missed" } ?? "missed") |")
            if let replay = hour.replay {
                let met = replay.firstFrameMilliseconds <= 300 ? "met" : "missed"
                let standIn = replay.measuredBy.hasPrefix("stand-in")
                rows.append("| replay of a one-hour session: first frame ≤ 300 ms | \(Format.fixed(replay.firstFrameMilliseconds, 0)) ms\(standIn ? " (stand-in: the page has no mark yet)" : "") | \(standIn ? "not the page's own" : met) |")
            } else {
                rows.append("| replay of a one-hour session: first frame ≤ 300 ms | \(hour.replayNote) | |")
            }
        }
        if let stall, let ratio = stall.ratio {
            rows.append("| stalled browser: ingest within 1.5× of the run without it | \(Format.fixed(ratio, 2))× (median of \(stall.pairs.count)), peak RSS \(Format.megabytes(stall.stalledPeakRSS)) | \(ratio <= 1.5 ? "met" : "missed") |")
        }
        return rows
    }
}
