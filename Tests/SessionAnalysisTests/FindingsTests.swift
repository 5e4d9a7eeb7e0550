import DeviceSimulator
import Foundation
import ReportCritique
import SessionAnalysis
import SessionAnalysisTestSupport
import SessionModel
import XCTest

/// The findings of issue 32: shakes from device motion, text too small to read, and the fluidity of each view.
final class FindingsTests: AnalysisTestCase {
    // MARK: Shakes

    /// 50 Hz samples of a phone held in portrait (gravity −1 g along y), shaken along x from `start`.
    static func samples(shakeAt start: Double?, amplitude: Double = 2.2, frequency: Double = 5, seconds: Double = 1,
                        until end: Double = 4) -> [AccelerationSample] {
        stride(from: 0.0, through: end, by: 0.02).map { t in
            let shaking = start.map { t >= $0 && t < $0 + seconds } ?? false
            let swing = shaking ? amplitude * sin(2 * .pi * frequency * (t - start!)) : 0
            return AccelerationSample(time: t0 + t, x: swing, y: -1, z: -0.1)
        }
    }

    func testAShakeIsStrongSamplesChangingDirectionInQuickSuccession() {
        let detector = ShakeDetector(options: AnalysisOptions())
        let shakes = detector.detect(Self.samples(shakeAt: 1))
        XCTAssertEqual(shakes.count, 1)
        let shake = shakes[0]
        XCTAssertEqual(shake.start, t0 + 1.04, accuracy: 0.03, "the first sample beyond 1.5 g")
        XCTAssertEqual(shake.end, t0 + 1.96, accuracy: 0.03)
        // Five periods: ten half-swings beyond the threshold, nine changes of direction between them.
        XCTAssertEqual(shake.reversals, 9)
        XCTAssertEqual(shake.peak, 2.2 * sin(0.4 * .pi), accuracy: 1e-6, "the highest sample of a 5 Hz swing at 50 Hz")
    }

    func testAStillPhoneATurnedPhoneAndOneJoltAreNoShake() {
        let detector = ShakeDetector(options: AnalysisOptions())
        XCTAssertEqual(detector.detect(Self.samples(shakeAt: nil)), [])
        // Turned upside down: 2 g away from the old gravity, but in one direction, and then calm again.
        let turned = Self.samples(shakeAt: nil, until: 1) + Self.samples(shakeAt: nil, until: 1).map {
            AccelerationSample(time: $0.time + 1.5, x: 0, y: 1, z: -0.1)
        }
        XCTAssertEqual(detector.detect(turned), [])
        // A jolt (the phone put down hard): one strong sample each way is one reversal.
        var jolt = Self.samples(shakeAt: nil)
        jolt[100].x = 2.5
        jolt[101].x = -2.5
        XCTAssertEqual(detector.detect(jolt), [])
        // Gentle swaying (a walk) stays under the threshold.
        XCTAssertEqual(detector.detect(Self.samples(shakeAt: 1, amplitude: 0.6)), [])
    }

    func testTheShakeThresholdsAreOptions() {
        var options = AnalysisOptions()
        options.shakeThreshold = 2.5
        XCTAssertEqual(ShakeDetector(options: options).detect(Self.samples(shakeAt: 1)), [], "2.2 g is under 2.5 g")
        options = AnalysisOptions()
        options.shakeReversals = 10
        XCTAssertEqual(ShakeDetector(options: options).detect(Self.samples(shakeAt: 1)), [], "nine reversals are fewer than ten")
        options.shakeReversals = 3
        // Two shakes 3 s apart are two.
        let two = Self.samples(shakeAt: 0.5, until: 2.5) + Self.samples(shakeAt: 0.5, until: 2.5).map {
            AccelerationSample(time: $0.time + 3, x: $0.x, y: $0.y, z: $0.z)
        }
        XCTAssertEqual(ShakeDetector(options: options).detect(two).count, 2)
    }

    func testAShakeIsAProblemAndOnTheTimeline() async throws {
        let analysis = try await analyse { journal in
            journal.viewDidAppear(at: t0, view: "Compose", transition: "launch", stack: ["Compose"], screenshot: image("c"))
            for sample in Self.samples(shakeAt: 1) {
                journal.accelerometer(at: sample.time, x: sample.x, y: sample.y, z: sample.z)
            }
        }
        XCTAssertEqual(try analysis.result(Shakes.self).shakes.map(\.view), ["Compose"])
        let problems = analysis.problems(.shake)
        XCTAssertEqual(problems.count, 1)
        XCTAssertEqual(problems[0].view, "Compose")
        XCTAssertEqual(problems[0].screenshot, 0)
        XCTAssertTrue(problems[0].evidence.hasPrefix("The phone was shaken while Compose was on screen: 9 changes of direction"), problems[0].evidence)

        let output = directory + "/report"
        let index = try ReportGenerator.generate(sessionFiles: [analysis.journal.path], configuration: ReportConfiguration(), output: output)
        let html = try String(contentsOfFile: index, encoding: .utf8)
        XCTAssertTrue(html.contains(#""shake","Compose","shaken for 0.9 s: 9 changes of direction, up to 2.1 g""#), "the timeline's row")
        // The classes follow the rows (written as the journal is read); report.js makes them the filter's options.
        let classes = html.range(of: #"],"classes":["#).map { String(html[$0.upperBound...].prefix { $0 != "]" }) }
        XCTAssertTrue(classes?.contains(#""motion""#) == true, "of class motion: \(classes ?? "no classes")")
        XCTAssertTrue(html.contains("shake: 1"), "counted among the problems")
    }

    // MARK: Small text

    func testTextUnderTheMinimumFontSizeIsTooSmallOncePerElement() async throws {
        let tree = JournalBuilder.node("UIWindow", frame: [0, 0, 320, 480], subviews: [
            JournalBuilder.node("UILabel", frame: [10, 80, 300, 20], text: "Terms apply", fontSize: 9),
            JournalBuilder.node("UILabel", frame: [10, 110, 300, 20], text: "Caption", fontSize: 11),
            JournalBuilder.node("UIButton", frame: [10, 140, 100, 44], title: "Send", fontSize: 10.5),
            JournalBuilder.node("UIView", frame: [10, 200, 100, 44], fontSize: 6),            // no text: nothing to read
            JournalBuilder.node("UILabel", frame: [10, 250, 0, 0], text: "hidden", fontSize: 6),  // not visible
            JournalBuilder.node("UILabel", frame: [10, 300, 300, 20], text: "no size"),
        ])
        let analysis = try await analyse { journal in
            journal.viewDidAppear(at: t0, view: "Terms", transition: "launch", stack: ["Terms"], screenshot: image("t"), uiState: tree)
            journal.viewDidAppear(at: t0 + 5, view: "Terms", transition: "pop", stack: ["Terms"], screenshot: image("t"), uiState: tree)
        }
        let small = analysis.problems(.smallText)
        XCTAssertEqual(small.map(\.element), ["UILabel \"Terms apply\"", "UIButton \"Send\""])
        XCTAssertEqual(small[0].evidence, "UILabel \"Terms apply\" is set in 9 pt, under the 11 pt the iOS Human Interface Guidelines give as the smallest readable size.")
        XCTAssertEqual(small[1].frame, Rect(x: 10, y: 140, width: 100, height: 44))
        XCTAssertTrue(small[1].evidence.contains("10.5 pt"))

        var options = AnalysisOptions()
        options.minimumFontSize = 12
        let stricter = try AnalyzedSession(path: analysis.journal.path, options: options)
        XCTAssertEqual(stricter.problems(.smallText).count, 3, "11 pt is under 12")
    }

    func testTheSimulatorsWordpressHasTextTooSmallBesideItsSmallHitTargets() async throws {
        let path = directory + "/wordpress.sqlite"
        try await SimulatedSession.write(scenario: "wordpress", to: path)
        let analysis = try AnalyzedSession(path: path)
        XCTAssertEqual(Set(analysis.problems(.smallText).compactMap(\.element)),
                       ["UITabBar \"Posts  Pages  Comments  Stats\"", "UIButton \"Status: Draft\"", "UIButton \"Add Photo\""])
        XCTAssertFalse(analysis.problems(.smallHitTarget).isEmpty)
        XCTAssertEqual(analysis.problems(.shake), [], "the ideal tester does not shake the phone")
        XCTAssertEqual(try analysis.result(Fluidity.self).views, [], "and the phone has no frame-timing sensor")
    }

    // MARK: Fluidity

    static func frames(_ view: String, hitch: Double, dropped: Int, longest: Double = 0.05) -> FrameTimingReading {
        var reading = FrameTimingReading(time: t0, kind: .frames, view: view, duration: 1)
        reading.frames = 60 - dropped
        reading.dropped = dropped
        reading.hitchTime = hitch
        reading.longestFrame = longest
        return reading
    }

    func testEachViewIsRatedByItsHitchTimeRatioAndItsTransitions() {
        let interpreter = FluidityInterpreter(options: AnalysisOptions())
        var slow = FrameTimingReading(time: t0 + 3, kind: .transition, view: "Smooth", duration: 1.2)
        slow.view = "Slow"
        let fluidity = interpreter.rate([
            FrameTimingReading(time: t0, kind: .launch, view: "Smooth", duration: 0.6),
            Self.frames("Smooth", hitch: 0.003, dropped: 0),
            Self.frames("Smooth", hitch: 0.001, dropped: 0),
            Self.frames("Sluggish", hitch: 0.0083, dropped: 1),
            Self.frames("Janky", hitch: 0.0167, dropped: 1),
            Self.frames("Janky", hitch: 0.0167, dropped: 1, longest: 0.1),
            FrameTimingReading(time: t0 + 2, kind: .transition, view: "Sluggish", duration: 0.4),
            slow,
            FrameTimingReading(time: t0 + 4, kind: .frames, view: nil, duration: 1),  // no view: left out
        ])
        XCTAssertEqual(fluidity.views.map(\.figures.view), ["Smooth", "Sluggish", "Janky", "Slow"])
        XCTAssertEqual(fluidity.views.map(\.rating), [.good, .warning, .critical, .critical])
        XCTAssertEqual(fluidity.views[0].figures.hitchRatio, 2, accuracy: 1e-9, "4 ms in 2 s")
        XCTAssertEqual(fluidity.views[2].figures.hitchRatio, 16.7, accuracy: 1e-9)
        XCTAssertEqual(fluidity.views[2].figures.droppedShare, 2.0 / 120, accuracy: 1e-9)
        XCTAssertEqual(fluidity.views[2].figures.longestFrame, 0.1)
        XCTAssertEqual(fluidity.views[1].transitions, .good)
        XCTAssertNil(fluidity.views[3].hitches, "no frames: no hitch rating")
        XCTAssertEqual(fluidity.views[3].transitions, .critical)
        XCTAssertEqual(fluidity.launches.map(\.duration), [0.6])
        XCTAssertEqual(fluidity.launchRating, .warning, "over Apple's 400 ms, under 1 s")
    }

    func testCriticalViewsAreProblemsAndTheReportRatesEveryView() async throws {
        let analysis = try await analyse { journal in
            journal.viewDidAppear(at: t0, view: "List", transition: "launch", stack: ["List"], screenshot: image("l"))
            journal.sensor("frameTiming", at: t0 + 0.1, ["kind": .string("launch"), "view": .string("List"), "duration": .real(1.5)])
            journal.sensor("frameTiming", at: t0 + 2, ["kind": .string("frames"), "view": .string("List"), "duration": .real(1),
                                                       "frames": .integer(54), "dropped": .integer(6), "hitchTime": .real(0.1),
                                                       "longestFrame": .real(0.0833), "refreshRate": .real(60)])
            journal.viewDidAppear(at: t0 + 3, view: "Detail", transition: "push", stack: ["List", "Detail"], screenshot: image("d"))
            journal.sensor("frameTiming", at: t0 + 3, ["kind": .string("transition"), "view": .string("Detail"), "from": .string("List"),
                                                       "duration": .real(0.36)])
            journal.sensor("frameTiming", at: t0 + 4, ["kind": .string("frames"), "view": .string("Detail"), "duration": .real(0.5),
                                                       "frames": .integer(30), "dropped": .integer(0), "hitchTime": .real(0),
                                                       "longestFrame": .real(0.0167)])
        }
        let problems = analysis.problems(.poorFluidity)
        XCTAssertEqual(problems.map(\.view), [nil, "List"])
        XCTAssertEqual(problems.map(\.element), ["launch", nil])
        XCTAssertEqual(problems[0].evidence, "The app took 1500 ms from launch to its first frame (critical above 1000 ms).")
        XCTAssertEqual(problems[1].evidence, "List: 100 ms of hitches per second of rendering (critical; critical above 10); 6 of 60 refreshes dropped, the longest frame 83 ms.")
        XCTAssertEqual(problems[1].screenshot, 0)

        let index = try ReportGenerator.generate(sessionFiles: [analysis.journal.path], configuration: ReportConfiguration(sections: [.fluidity]),
                                                 output: directory + "/report")
        let html = try String(contentsOfFile: index, encoding: .utf8)
        XCTAssertTrue(html.contains("<h2>Performance and fluidity</h2>") || html.contains(">Performance and fluidity<"), "the section's heading")
        XCTAssertTrue(html.contains("Launch to first frame: <span class=\"rating critical\">critical</span> 1500 ms"))
        XCTAssertTrue(html.contains("<tr><td>List</td><td><span class=\"rating critical\">critical</span></td><td class=\"num\">100.0 ms/s</td><td class=\"num\">6 of 60 (10.0 %)</td>"), html)
        XCTAssertTrue(html.contains("<tr><td>Detail</td><td><span class=\"rating good\">good</span></td><td class=\"num\">0.0 ms/s</td>"))
        XCTAssertTrue(html.contains("1, slowest 360 ms <span class=\"rating good\">good</span>"))
    }

    // MARK: From the simulator

    func testASimulatedTesterWhoFailsShakesThePhoneAndItsJankyViewsAreRated() async throws {
        var behaviour = ParticipantBehaviour()
        behaviour.failedTasks = ["Edit blog posting"]
        behaviour.abandonedTasks = ["Publish blog posting"]
        behaviour.shakes = true
        behaviour.frameTiming = true
        let path = directory + "/shaken.sqlite"
        try await SimulatedSession.write(scenario: "wordpress", to: path, seed: 5, behaviour: behaviour)
        let analysis = try AnalyzedSession(path: path)
        let shakes = try analysis.result(Shakes.self).shakes
        XCTAssertEqual(shakes.count, 2, "one per task gone wrong")
        XCTAssertEqual(analysis.problems(.shake).count, 2)
        let fluidity = try analysis.result(Fluidity.self)
        let views: Set<String> = ["BlogsViewController", "PostsViewController", "EditPostViewController", "CategoriesViewController"]
        XCTAssertTrue(Set(fluidity.views.map(\.figures.view)).isSubset(of: views), "\(fluidity.views.map(\.figures.view))")
        XCTAssertGreaterThanOrEqual(fluidity.views.count, 3)
        XCTAssertTrue(fluidity.views.contains { $0.rating == .critical }, "the seed makes at least one view janky")
        XCTAssertTrue(fluidity.views.contains { $0.hitches == .good }, "and most smooth")
        XCTAssertEqual(fluidity.launches.count, 1)
        XCTAssertFalse(analysis.problems(.poorFluidity).isEmpty)
    }
}
