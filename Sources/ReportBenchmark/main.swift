internal import Foundation
internal import ReportCritique
internal import SessionAnalysis
internal import SessionAnalysisTestSupport

// Times analysis and report of a synthetic one-hour session (issue 7: at most 10 s per captured hour on the
// project's 2-core machine, in release mode): `swift run -c release ReportBenchmark [--keep DIR]`.
// With --keep the session file and the report stay in DIR; otherwise they go to a temporary directory.

let arguments = CommandLine.arguments
let keep = arguments.firstIndex(of: "--keep").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
let directory = keep ?? NSTemporaryDirectory() + "mueval-report-bench-\(getpid())"
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
defer { if keep == nil { try? FileManager.default.removeItem(atPath: directory) } }

let file = directory + "/hour.sqlite"
try? FileManager.default.removeItem(atPath: file)
let clock = ContinuousClock()
let synthesis = try await clock.measure { try await SyntheticHour.write(to: file) }

var analysis: AnalyzedSession?
let analysing = try clock.measure { analysis = try AnalyzedSession(path: file) }
var index = ""
let writing = try clock.measure {
    index = try ReportWriter(configuration: ReportConfiguration()).write([analysis!], to: directory + "/report")
}

func seconds(_ duration: Duration) -> String {
    String(format: "%.2f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
}
let overview = analysis!.results.first(Overview.self)!
print("""
    session: \(overview.eventCount) events, \(analysis!.results.first(Screenshots.self)!.shots.count) screenshots, \
    \(String(format: "%.0f", overview.duration)) s recorded (synthesised in \(seconds(synthesis)))
    analysis: \(seconds(analysing))
    report:   \(seconds(writing))
    total:    \(seconds(analysing + writing)) (limit 10 s)
    \(keep == nil ? "" : "report: \(index)")
    """)
