internal import Foundation
internal import JournalStorage
internal import ReportCritique
internal import SessionAnalysis
internal import SessionAnalysisTestSupport
internal import SessionModel
internal import StudyAnalysis

// Times analysis and report of a synthetic one-hour session (issue 7: at most 10 s per captured hour on the
// project's 2-core machine, in release mode; issue 41: 1 s): `swift run -c release ReportBenchmark [--keep DIR] [--runs N]`,
// the median of N runs (5).
// `ReportBenchmark study [--keep DIR] [--participants N] [--fresh]` times the study report instead (issue 41: 40
// participants × one hour, 2 iterations of 20, within 10 s): the sessions are synthesised here, then stopped as
// muevald stops them (each analysed, as its automatic report does, and its digest made from that analysis and
// stored: the digest's own time per session is measured), then a child process (`study-report DIR`) makes the
// study report from the digests, so that its peak RSS is the report's alone. `--fresh` leaves the stop out: the
// study report then analyses every session itself, as before digests.
// With --keep the session files and the report stay in DIR; otherwise they go to a temporary directory.

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}
let clock = ContinuousClock()

func seconds(_ duration: Duration) -> String {
    String(format: "%.2f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
}

/// The process's peak resident memory (Linux reports ru_maxrss in kilobytes).
func peakRSS() -> String {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return String(format: "%.0f MB", Double(usage.ru_maxrss) / 1024)
}

func sessionBenchmark(_ directory: String, keep: Bool) async throws {
    let file = directory + "/hour.sqlite"
    try? FileManager.default.removeItem(atPath: file)
    let synthesis = try await clock.measure { try await SyntheticHour.write(to: file) }

    // Each run analyses the file and writes its report anew (into a fresh directory); the median of the runs is the
    // figure: one run moves by a third with the neighbours' load on these shared 2-core machines.
    var runs: [(analysis: Duration, writing: Duration)] = []
    var analysis: AnalyzedSession?
    var index = ""
    for _ in 1...max(1, Int(option("--runs") ?? "") ?? 5) {
        let report = directory + "/report"
        try? FileManager.default.removeItem(atPath: report)
        analysis = nil
        let analysing = try clock.measure { analysis = try AnalyzedSession(path: file) }
        let writing = try clock.measure {
            index = try ReportWriter(configuration: ReportConfiguration()).write([analysis!], to: report)
        }
        runs.append((analysing, writing))
    }
    func median(_ values: [Duration]) -> Duration { values.sorted()[values.count / 2] }
    let overview = analysis!.results.first(Overview.self)!
    print("""
        session: \(overview.eventCount) events, \(analysis!.results.first(Screenshots.self)!.shots.count) screenshots, \
        \(String(format: "%.0f", overview.duration)) s recorded (synthesised in \(seconds(synthesis)))
        analysis: \(seconds(median(runs.map(\.analysis))))
        report:   \(seconds(median(runs.map(\.writing))))
        total:    \(seconds(median(runs.map { $0.analysis + $0.writing }))) (limit 10 s)
        (medians of \(runs.count) runs; analysis + report each: \(runs.map { seconds($0.analysis + $0.writing) }.joined(separator: ", ")))
        \(keep ? "report: \(index)" : "")
        """)
}

/// False when the study report failed (its process said why).
func studyBenchmark(_ directory: String, participants: Int, fresh: Bool) async throws -> Bool {
    var data: StudyData?
    let synthesis = try await clock.measure {
        data = try await SyntheticStudy.write(into: directory, iterations: 2, participants: participants)
    }
    try JSONEncoder().encode(data!).write(to: URL(fileURLWithPath: directory + "/study.json"))
    print("study: 2 iterations × \(participants) participants, \(data!.sessions.count) synthetic one-hour sessions "
          + "(100,000 events, 1,000 screenshots and 3 tasks each; synthesised in \(seconds(synthesis)))")
    if !fresh { try await stop(data!.sessions) }
    // The child writes to the same output: these lines first.
    fflush(nil)
    let child = Process()
    child.executableURL = URL(fileURLWithPath: "/proc/self/exe")
    child.arguments = ["study-report", directory]
    try child.run()
    child.waitUntilExit()
    guard child.terminationStatus == 0 else {
        print("study report: failed (the study-report process exited with \(child.terminationStatus); see its errors above)")
        return false
    }
    return true
}

/// What muevald does at each stop of a study session, two sessions at a time (`reports.max_concurrent`): the
/// automatic report's analysis, and the session's digest made from it and stored in its file. The report's own
/// writing is left out: it is the session report benchmark's.
func stop(_ sessions: [SessionRecord]) async throws {
    let timings = try await withThrowingTaskGroup(of: (analysis: Duration, digest: Duration).self) { group in
        var timings: [(analysis: Duration, digest: Duration)] = []
        for (index, record) in sessions.enumerated() {
            if index >= 2, let done = try await group.next() { timings.append(done) }
            group.addTask {
                try await BlockingWork.run {
                    guard let maker = StudyDigestMaker(sessionFile: record.path, options: AnalysisOptions()) else {
                        throw StudyBenchmarkError.noStudyContext(record.path)
                    }
                    var analysis: AnalyzedSession?
                    let analysing = try clock.measure { analysis = try AnalyzedSession(path: record.path) }
                    let digesting = try clock.measure { try maker.store(from: analysis!, record: record, options: AnalysisOptions()) }
                    return (analysing, digesting)
                }
            }
        }
        while let done = try await group.next() { timings.append(done) }
        return timings
    }
    let digests = timings.map(\.digest).sorted(), analyses = timings.map(\.analysis).sorted()
    let bytes = sessions.compactMap { try? SessionReader(path: $0.path).analysisDigest(kind: StudyDigestMaker.kind)?.digest.count }
    print("""
        after stop (each session as muevald's automatic report: analysed, then its digest made from that analysis and stored; two at a time):
          analysis: median \(seconds(analyses[analyses.count / 2])) per session (the report's, paid anyway)
          digest:   median \(seconds(digests[digests.count / 2])), max \(seconds(digests.last!)) per session, \
        \(bytes.count) stored, \(bytes.reduce(0, +) / max(bytes.count, 1) / 1024) KB each on average
        """)
}

enum StudyBenchmarkError: Error {
    case noStudyContext(String)
}

func studyReport(_ directory: String) async throws {
    let data = try JSONDecoder().decode(StudyData.self, from: Data(contentsOf: URL(fileURLWithPath: directory + "/study.json")))
    var index = ""
    var results: StudyResults?
    // What StudyReportGenerator.generate does (without the sessions' own reports), in its two steps: the results as
    // muevald makes them (StudyReports: digests read, those missing made and stored), then the report written.
    let analysing = try await clock.measure {
        results = try await StudyAnalyzer.analyze(data, options: AnalysisOptions(), digests: .readWrite)
    }
    let writing = try await clock.measure {
        index = try await BlockingWork.run { [results] in
            try StudyReportWriter().write(results!, to: directory + "/report", links: StudyReportLinks())
        }
    }
    let size = (try? FileManager.default.attributesOfItem(atPath: index)[.size] as? Int).flatMap { $0 } ?? 0
    print("""
        study results (stored digests read, missing ones made): \(seconds(analysing))
        report written: \(seconds(writing)) (index.html \(size / 1024) KB, \
        \((try? FileManager.default.contentsOfDirectory(atPath: directory + "/report/shots").count) ?? 0) screenshots)
        peak RSS: \(peakRSS())
        total:    \(seconds(analysing + writing)) (goal 10 s)
        """)
}

let keep = option("--keep")
let directory = keep ?? NSTemporaryDirectory() + "mueval-report-bench-\(getpid())"
var succeeded = true
if arguments.count > 2, arguments[1] == "study-report" {
    try await studyReport(arguments[2])
} else {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { if keep == nil { try? FileManager.default.removeItem(atPath: directory) } }
    if arguments.dropFirst().first == "study" {
        succeeded = try await studyBenchmark(directory, participants: option("--participants").flatMap(Int.init) ?? 20,
                                             fresh: arguments.contains("--fresh"))
    } else {
        try await sessionBenchmark(directory, keep: keep != nil)
    }
}
if !succeeded { exit(1) }
