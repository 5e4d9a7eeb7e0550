import Foundation
import SessionAnalysisTestSupport
import SessionModel
import StudyAnalysis
import Testing
import WireProtocol

/// The tester's own task marks (`by` = `tester`, from the capture library's `beginTask`/`endTask`/`giveUpTask`):
/// they delimit attempts like the app's task events, a give-up makes the attempt abandoned ("gave up") whatever the
/// app's events show, an observer's verdict still overrides it, and the export says whose marks delimit each attempt.
@Suite struct TesterMarksTests {
    typealias F = StudyFixture

    /// P1 marks every task themself; P2's marks are stray (a give-up never begun, an end of the app's run).
    private func analysed() async throws -> StudyResults {
        let fixture = try StudyFixture()
        defer { fixture.remove() }
        let p1 = try await fixture.session(id: 1, iteration: 1, participant: "P1") { journal in
            // Publish: the tester's begin and end around the success event.
            journal.testerMark(at: t0 + 10, "begin", task: F.publish)
            journal.custom(at: t0 + 20, name: "PostPublished")
            journal.testerMark(at: t0 + 30, "end", task: F.publish)
            // Find settings: the view appears, but the tester says they gave up.
            journal.testerMark(at: t0 + 40, "begin", task: F.settings)
            journal.viewDidAppear(at: t0 + 45, view: "SettingsView", transition: "push", stack: ["FeedView", "SettingsView"])
            journal.testerMark(at: t0 + 50, "giveUp", task: F.settings)
            // Rate app: given up, then the observer says it was a success.
            journal.testerMark(at: t0 + 60, "begin", task: F.rate)
            journal.testerMark(at: t0 + 70, "giveUp", task: F.rate)
            journal.note(try F.mark(.outcome, F.rate, .success), at: t0 + 75)
            // Invite: the app's and the tester's marks overlap: one run, from the app's begin to its own end.
            journal.marker(at: t0 + 80, "begin", task: F.invite)
            journal.testerMark(at: t0 + 81, "begin", task: F.invite)
            journal.custom(at: t0 + 83, name: "Invited")
            journal.marker(at: t0 + 85, "end", task: F.invite)
            journal.testerMark(at: t0 + 86, "end", task: F.invite)
        }
        let p2 = try await fixture.session(id: 2, iteration: 1, participant: "P2") { journal in
            journal.testerMark(at: t0 + 5, "giveUp", task: F.publish)
            journal.marker(at: t0 + 10, "begin", task: F.settings)
            journal.testerMark(at: t0 + 15, "end", task: F.settings)
        }
        return try await StudyAnalyzer.analyze(StudyData(study: fixture.study, sessions: [p1, p2], responses: StudyResponses()))
    }

    private func attempt(_ results: StudyResults, _ participant: String, _ task: String) throws -> TaskAttempt {
        try #require(results.attempts.first { $0.participant == participant && $0.task == task })
    }

    @Test func theTestersMarksDelimitAnAttemptLikeTheAppsTaskEvents() async throws {
        let results = try await analysed()
        let publish = try attempt(results, "P1", F.publish)
        #expect(publish.start == t0 + 10 && publish.end == t0 + 30)
        #expect(publish.outcome == .success && publish.reason == "custom event PostPublished")
        #expect(publish.markedBy == [.tester])
    }

    @Test func aGiveUpIsAbandonedBecauseTheTesterSaidSoWhateverTheAppShows() async throws {
        let results = try await analysed()
        let settings = try attempt(results, "P1", F.settings)
        #expect(settings.outcome == .abandoned && settings.derivedOutcome == .abandoned && !settings.overridden)
        #expect(settings.reason == "gave up")
        // Time until the tester gave up, and measured up to then.
        #expect(settings.end == t0 + 50 && settings.duration == 10)
        #expect(settings.views == ["SettingsView"])
    }

    @Test func anObserversVerdictStillOverridesAGiveUp() async throws {
        let results = try await analysed()
        let rate = try attempt(results, "P1", F.rate)
        #expect(rate.outcome == .success && rate.derivedOutcome == .abandoned && rate.overridden)
        #expect(rate.reason == "observer: success (derived abandoned: gave up)")
    }

    @Test func theAppsAndTheTestersOverlappingMarksAreOneRun() async throws {
        let results = try await analysed()
        let invite = try attempt(results, "P1", F.invite)
        #expect(invite.runs == 1 && invite.markedBy == [.app, .tester])
        #expect(invite.start == t0 + 80 && invite.end == t0 + 85)
        #expect(invite.outcome == .success)
    }

    /// A give-up never begun is no attempt; the tester's end does not close the app's run.
    @Test func strayMarksOpenOrCloseNothingOfTheOtherSource() async throws {
        let results = try await analysed()
        #expect(!results.attempts.contains { $0.participant == "P2" && $0.task == F.publish })
        let settings = try attempt(results, "P2", F.settings)
        #expect(settings.end == nil && settings.outcome == .abandoned && settings.reason == "no end")
        #expect(settings.markedBy == [.app])
    }

    @Test func theExportSaysWhoseMarksDelimitEachAttempt() async throws {
        let rows = StudyExportTests.parse(StudyExport.csv(try await analysed()))
        func row(_ participant: String, _ task: String) throws -> [String: String] {
            let found = try #require(rows.first { $0[3] == participant && $0[5] == task })
            return Dictionary(uniqueKeysWithValues: zip(StudyExport.columns, found))
        }
        let settings = try row("P1", F.settings)
        #expect(settings["outcome"] == "abandoned" && settings["reason"] == "gave up" && settings["time_s"] == "10")
        #expect(settings["marked_by"] == "tester")
        #expect(try row("P1", F.invite)["marked_by"] == "app;tester")
        #expect(try row("P1", F.rate)["overridden"] == "true")
        #expect(try row("P2", F.publish)["outcome"] == StudyExport.notAttempted)
    }
}
