internal import Foundation
internal import ReportCritique
internal import SessionAnalysis
internal import SessionAnalysisTestSupport
internal import SessionModel

// Times analysis and report of a synthetic one-hour session (issue 7: at most 10 s per captured hour on the
// project's 2-core machine, in release mode): `swift run -c release ReportBenchmark [--keep DIR]`.
// `ReportBenchmark study [--keep DIR] [--participants N]` times the study report instead (issue 16: 40
// participants × one hour, 2 iterations of 20, within 60 s): the sessions are synthesised here, then a child
// process (`study-report DIR`) analyses and writes, so that its peak RSS is the report's alone.
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

    var analysis: AnalyzedSession?
    let analysing = try clock.measure { analysis = try AnalyzedSession(path: file) }
    var index = ""
    let writing = try clock.measure {
        index = try ReportWriter(configuration: ReportConfiguration()).write([analysis!], to: directory + "/report")
    }
    let overview = analysis!.results.first(Overview.self)!
    print("""
        session: \(overview.eventCount) events, \(analysis!.results.first(Screenshots.self)!.shots.count) screenshots, \
        \(String(format: "%.0f", overview.duration)) s recorded (synthesised in \(seconds(synthesis)))
        analysis: \(seconds(analysing))
        report:   \(seconds(writing))
        total:    \(seconds(analysing + writing)) (limit 10 s)
        \(keep ? "report: \(index)" : "")
        """)
}

/// False when the study report failed (its process said why).
func studyBenchmark(_ directory: String, participants: Int) async throws -> Bool {
    var data: StudyData?
    let synthesis = try await clock.measure {
        data = try await SyntheticStudy.write(into: directory, iterations: 2, participants: participants)
    }
    try JSONEncoder().encode(data!).write(to: URL(fileURLWithPath: directory + "/study.json"))
    print("study: 2 iterations × \(participants) participants, \(data!.sessions.count) synthetic one-hour sessions "
          + "(100,000 events, 1,000 screenshots and 3 tasks each; synthesised in \(seconds(synthesis)))")
    // The child writes to the same output: this line first.
    fflush(nil)
    let child = Process()
    child.executableURL = URL(fileURLWithPath: "/proc/self/exe")
    child.arguments = ["study-report", directory]
    try child.run()
    child.waitUntilExit()
    guard child.terminationStatus == 0 else {
        print("analysis and report: failed (the study-report process exited with \(child.terminationStatus); see its errors above)")
        return false
    }
    return true
}

func studyReport(_ directory: String) async throws {
    let data = try JSONDecoder().decode(StudyData.self, from: Data(contentsOf: URL(fileURLWithPath: directory + "/study.json")))
    var index = ""
    let generating = try await clock.measure {
        index = try await StudyReportGenerator.generate(data, iteration: nil, output: directory + "/report", options: AnalysisOptions(),
                                                        links: StudyReportLinks(), sessionReports: false)
    }
    let size = (try? FileManager.default.attributesOfItem(atPath: index)[.size] as? Int).flatMap { $0 } ?? 0
    print("""
        analysis and report: \(seconds(generating)) (index.html \(size / 1024) KB, \
        \((try? FileManager.default.contentsOfDirectory(atPath: directory + "/report/shots").count) ?? 0) screenshots)
        peak RSS: \(peakRSS())
        total:    \(seconds(generating)) (limit 60 s)
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
        succeeded = try await studyBenchmark(directory, participants: option("--participants").flatMap(Int.init) ?? 20)
    } else {
        try await sessionBenchmark(directory, keep: keep != nil)
    }
}
if !succeeded { exit(1) }
