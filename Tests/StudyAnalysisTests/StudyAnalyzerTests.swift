import Foundation
import SessionAnalysis
import SessionModel
import StudyAnalysis
import StudyMetrics
import Testing
import WireProtocol

/// The rules of docs/STUDIES.md on the fixture's sessions; every expected number is worked out by hand.
@Suite struct StudyAnalyzerTests {
    typealias F = StudyFixture

    private func analysed(iteration: Int? = nil) async throws -> StudyResults {
        let fixture = try StudyFixture()
        defer { fixture.remove() }
        return try await StudyAnalyzer.analyze(try await fixture.write(), iteration: iteration, parallelism: 2)
    }

    private func attempt(_ results: StudyResults, _ participant: String, _ task: String) throws -> TaskAttempt {
        try #require(results.attempts.first { $0.participant == participant && $0.task == task })
    }

    @Test func sessionsArePlacedByTheCatalogOrByTheirFile() async throws {
        let results = try await analysed()
        #expect(results.sessions.map(\.id) == [1, 2, 3, 4, 5])
        #expect(results.sessions.map(\.participant) == ["P1", "P2", "P1", "P3", "P4"])
        #expect(results.sessions.map(\.iteration) == [1, 1, 1, 2, 2])
        #expect(results.sessions[0].start == t0)
        #expect(results.iterations.map(\.number) == [1, 2])
        #expect(results.iterations[0].participants == ["P1", "P2"])
        #expect(results.iterations[0].label == "alpha")
    }

    @Test func outcomesFollowTheCriterionTheEndTheLimitAndTheVerdict() async throws {
        let results = try await analysed()
        let publish = try attempt(results, "P1", F.publish)
        #expect(publish.start == t0 + 8)    // the observer's begin, earlier than the app's
        #expect(publish.end == t0 + 42)     // the end that matches it
        #expect(publish.outcome == .success && publish.derivedOutcome == .success && !publish.overridden)
        #expect(publish.reason == "custom event PostPublished")

        let failed = try attempt(results, "P2", F.publish)
        #expect(failed.outcome == .failure && failed.reason == "no custom event PostPublished")

        let byView = try attempt(results, "P1", F.settings)
        #expect(byView.outcome == .success && byView.reason == "view SettingsView appeared")
        #expect(byView.start == t0 + 50 && byView.session == 1)

        let abandoned = try attempt(results, "P2", F.settings)
        #expect(abandoned.outcome == .abandoned && abandoned.end == nil && abandoned.reason == "no end")
        #expect(abandoned.views == ["SearchView"] && abandoned.backtracks == 0, "measured until the next task began")

        let noVerdict = try attempt(results, "P1", F.rate)
        #expect(noVerdict.outcome == .failure && noVerdict.reason == "no observer verdict" && !noVerdict.overridden)

        let verdict = try attempt(results, "P2", F.rate)
        #expect(verdict.outcome == .success && verdict.derivedOutcome == .failure && verdict.overridden)

        let assisted = try attempt(results, "P1", F.invite)
        #expect(assisted.derivedOutcome == .failure && assisted.outcome == .assisted && assisted.overridden)
        #expect(assisted.reason.contains("over the 10 s limit"))
        #expect(assisted.reason.hasPrefix("observer: assisted"))

        // Never begun: no attempt.
        #expect(results.attempts.first { $0.participant == "P2" && $0.task == F.invite } == nil)
    }

    @Test func theFirstRunAcrossTheIterationsSessionsIsTheAttemptAndRunsCountsThemAll() async throws {
        let results = try await analysed()
        let settings = try attempt(results, "P1", F.settings)
        #expect(settings.runs == 3)         // two in session 1, one in session 3
        #expect(settings.session == 1)
        #expect(settings.duration == 8)
        #expect(try attempt(results, "P1", F.publish).runs == 1)
    }

    @Test func tapsViewsAndBacktracksAreCountedWithinTheAttempt() async throws {
        let results = try await analysed()
        let publish = try attempt(results, "P1", F.publish)
        #expect(publish.misclicks == 1)              // the tap on no element
        #expect(publish.unresponsiveTaps == 2)       // that one and the leaf; the Send button answered at once
        #expect(publish.views == ["ComposeView", "SettingsView", "ComposeView", "FeedView"])
        // Longest common subsequence with FeedView, ComposeView, FeedView: ComposeView, FeedView (2); 4 − 2.
        #expect(publish.extraViews == 2)
        #expect(publish.backtracks == 2)             // the two pops
        let other = try attempt(results, "P2", F.publish)
        #expect(other.misclicks == 0 && other.unresponsiveTaps == 1 && other.extraViews == 0 && other.backtracks == 0)
        #expect(try attempt(results, "P1", F.settings).extraViews == nil)   // no expected path
    }

    @Test func problemsAreGroupedAcrossParticipantsAndRanked() async throws {
        let results = try await analysed()
        let first = results.problems.filter { $0.iteration == 1 }
        #expect(first.map(\.kind) == [.unresponsiveTap, .unresponsiveTap, .smallHitTarget])
        let leaf = first[0]
        #expect(leaf.view == "ComposeView" && leaf.element == "UIImageView \"leaf\"")
        #expect(leaf.participants == ["P1", "P2"] && leaf.frequency == 1 && leaf.severity == 3 && leaf.priority == 3)
        #expect(leaf.occurrences == 2 && leaf.sightings.map(\.session) == [1, 2])
        #expect(leaf.sightings[0].screenshot?.sessionPath.hasSuffix("s1.sqlite") == true)
        #expect(leaf.id == "i1-unresponsive-tap-ComposeView-UIImageView-leaf")
        let background = first[1]
        #expect(background.element == nil && background.participants == ["P1"] && background.frequency == 0.5)
        #expect(background.priority == 1.5)
        let small = first[2]
        #expect(small.element == "UIButton \"x\"" && small.severity == 2 && small.priority == 1)
        // Hit during P1's Publish attempt: both taps; P2's: the leaf only.
        #expect(Set(try attempt(results, "P1", F.publish).problems) == [leaf.id, background.id])
        #expect(try attempt(results, "P2", F.publish).problems == [leaf.id])
        let metrics = try #require(results.taskMetrics.first { $0.task == F.publish && $0.iteration == 1 })
        #expect(metrics.problemsHit == 2)
    }

    @Test func susPerIterationWithTheLatestAnswers() async throws {
        let results = try await analysed()
        let first = results.iterations[0], second = results.iterations[1]
        #expect(first.susScores == ["P1": 100, "P2": 75])
        #expect(second.susScores == ["P3": 50, "P4": 87.5])
        let sus = try #require(first.sus)
        #expect(sus.value == 87.5 && sus.n == 2)
        // t(0.975, 1) = 12.706 × 12.5 reaches far outside 0…100: clipped.
        #expect(sus.interval == Interval(low: 0, high: 100))
        #expect(first.grade == .aPlus)
        #expect(second.grade == .c)          // 68.75
        #expect(first.susChange == nil)
        #expect(second.susChange?.value == -18.75)
    }

    @Test func seqIsJoinedToAttemptsAndTheNumbersPerTaskAreComputed() async throws {
        let results = try await analysed()
        #expect(try attempt(results, "P1", F.publish).seq == 6)
        #expect(try attempt(results, "P2", F.publish).seq == 3)
        let first = try #require(results.taskMetrics.first { $0.task == F.publish && $0.iteration == 1 })
        #expect(first.attempts == 2 && first.successes == 1)
        // Adjusted Wald by hand: z = 1.96, p = (1 + z²/2) / (2 + z²) = 0.5, margin z √(p(1−p)/(2 + z²)).
        let z = 1.959964, margin = z * (0.25 / (2 + z * z)).squareRoot()
        let completion = try #require(first.completion)
        #expect(completion.value == 0.5)
        #expect(abs(try #require(completion.interval).low - (0.5 - margin)) < 1e-6)
        #expect(abs(try #require(completion.interval).high - (0.5 + margin)) < 1e-6)
        let time1 = try #require(first.time)
        #expect(abs(time1.value - 34) < 1e-9 && time1.n == 1 && time1.interval == nil)
        #expect(first.seq?.value == 4.5)
        #expect(first.misclicks == 0.5 && first.unresponsiveTaps == 1.5 && first.extraViews == 1 && first.backtracks == 1)

        // Iteration 2: 20 s and 15 s: geometric mean √300, interval exp(mean log ± t(1) · s/√2).
        let second = try #require(results.taskMetrics.first { $0.task == F.publish && $0.iteration == 2 })
        let time = try #require(second.time)
        #expect(abs(time.value - 300.0.squareRoot()) < 1e-9)
        let logs = [log(20.0), log(15.0)], mean = (logs[0] + logs[1]) / 2
        let sd = abs(logs[0] - logs[1]) / 2.0.squareRoot(), tMargin = 12.706 * sd / 2.0.squareRoot()
        #expect(abs(try #require(time.interval).low - exp(mean - tMargin)) < 0.01)
        #expect(abs(try #require(time.interval).high - exp(mean + tMargin)) < 0.5)
        // Assisted is not a success.
        let invite = try #require(results.taskMetrics.first { $0.task == F.invite && $0.iteration == 1 })
        #expect(invite.attempts == 1 && invite.successes == 0 && invite.time == nil)

        let comparison = try #require(results.comparisons.first { $0.task == F.publish })
        #expect(comparison.from == 1 && comparison.to == 2)
        #expect(comparison.completion?.value == 0.5)
        #expect(comparison.time == nil)      // one success in iteration 1: no variance
    }

    @Test func notesArePlacedInTheTaskTheyWereTakenDuring() async throws {
        let results = try await analysed()
        #expect(results.notes.map(\.note.text) == ["looks for the button", "between tasks"])
        #expect(results.notes.map(\.task) == [F.publish, nil])
        #expect(results.notes.allSatisfy { $0.session == 1 && $0.participant == "P1" })
    }

    @Test func quotesAreListedUnderTheTaskTheyWereSaidIn() async throws {
        let results = try await analysed()
        let publish = try attempt(results, "P1", F.publish)
        #expect(publish.quotes.map(\.text) == ["where is the send button"])
        let others = results.attempts.filter { $0.task != F.publish }
        #expect(others.allSatisfy { $0.quotes.isEmpty })
    }

    @Test func heatmapsPerViewForEveryoneAndPerParticipant() async throws {
        let results = try await analysed()
        let compose = results.heatmaps.filter { $0.iteration == 1 && $0.view == "ComposeView" }
        #expect(compose.map(\.participant) == [nil, "P1", "P2"])
        #expect(compose[0].points.count == 4 && compose[1].points.count == 3 && compose[2].points.count == 1)
        #expect(compose[0].screenshot != nil)
    }

    @Test func anIterationAloneAndAnUnknownOne() async throws {
        let results = try await analysed(iteration: 2)
        #expect(results.iterations.map(\.number) == [2])
        #expect(results.sessions.map(\.id) == [4, 5])
        #expect(Set(results.attempts.map(\.iteration)) == [2])
        #expect(results.comparisons.isEmpty)
        #expect(results.iterations[0].susChange?.value == -18.75)   // SUS needs no session of iteration 1
        #expect(results.responses.sus.allSatisfy { $0.iteration == 2 })
        let fixture = try StudyFixture()
        defer { fixture.remove() }
        let data = try await fixture.write()
        await #expect(throws: StudyAnalysisError.unknownIteration(7, known: [1, 2])) {
            try await StudyAnalyzer.analyze(data, iteration: 7)
        }
    }

    @Test func aMissingSessionFileIsAClearError() async throws {
        let fixture = try StudyFixture()
        defer { fixture.remove() }
        var data = try await fixture.write()
        data.sessions[1].path = fixture.directory + "/gone.sqlite"
        await #expect {
            try await StudyAnalyzer.analyze(data)
        } throws: { error in
            "\(error)".hasPrefix("session 2 (\(fixture.directory)/gone.sqlite) cannot be analysed")
        }
    }
}
