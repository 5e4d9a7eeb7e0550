import Foundation
import SessionAnalysisTestSupport
import SessionModel
import StudyAnalysis
import Testing
import WireProtocol

/// A study session recorded before values were checked at the edge: markers at times 10¹⁸ s away, an end
/// stamped before its begin, touches at no place. Analysis treats those values as missing (docs/REPORTS.md,
/// "Absurd numbers"); the study's numbers stay numbers and its CSV is written.
@Suite struct AbsurdStudyTests {
    typealias F = StudyFixture

    @Test func absurdValuesInAStudySessionAreMissing() async throws {
        let fixture = try StudyFixture()
        defer { fixture.remove() }
        let session = try await fixture.session(id: 1, iteration: 1, participant: "P1") { journal in
            journal.viewDidAppear(at: t0, view: "FeedView", transition: "launch", stack: ["FeedView"], screenshot: F.image("feed"))
            // Publish: begun at an absurd time, ended at a plausible one.
            journal.marker(at: 1e18, "begin", task: F.publish)
            journal.marker(at: t0 + 5, "end", task: F.publish)
            // Settings: its end stamped before its begin; the view it asks for appears in between.
            journal.marker(at: t0 + 20, "begin", task: F.settings)
            journal.viewDidAppear(at: t0 + 15, view: "SettingsView", transition: "push", stack: ["FeedView", "SettingsView"])
            journal.marker(at: t0 + 10, "end", task: F.settings)
            for (x, y) in [(Double.nan, 1.0), (1e300, -.infinity)] {
                journal.tap(at: t0 + 21, x: x, y: y, view: "FeedView")
            }
            journal.tap(at: .infinity, x: 10, y: 10, view: "FeedView")
        }
        let results = try await StudyAnalyzer.analyze(StudyData(study: fixture.study, sessions: [session], responses: StudyResponses()),
                                                      iteration: nil, parallelism: 1)
        #expect(!results.attempts.contains { $0.task == F.publish }, "a begin at no plausible time is no run")
        let settings = try #require(results.attempts.first { $0.task == F.settings })
        #expect(settings.start == t0 + 20)
        #expect(settings.misclicks == 0, "touches at no place are no taps")
        #expect(abs(try #require(results.sessions.first).duration - 21.1) < 1e-3, "from the first to the last plausible event")
        for metrics in results.taskMetrics {
            #expect([metrics.time?.value, metrics.completion?.value].allSatisfy { $0?.isFinite ?? true })
        }
        let csv = StudyExport.csv(results)
        #expect(csv.range(of: #"\b(nan|inf)\b"#, options: .regularExpression) == nil, "\(csv)")
    }
}
