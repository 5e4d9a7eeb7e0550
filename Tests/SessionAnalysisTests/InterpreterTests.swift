@testable import SessionAnalysis
import SessionAnalysisTestSupport
import SessionModel
import XCTest

/// Each interpreter against a journal whose answer is known.
final class InterpreterTests: AnalysisTestCase {
    let button = JournalBuilder.element("UIButton", id: "publish", frame: [245, 27, 70, 30], title: "Publish")
    let picture = JournalBuilder.element("UIImageView", id: "tree", frame: [0, 100, 320, 300])

    func testOverviewCountsEventsPerClassAndTakesStartAndEndFromTheFirstAndLastEvent() async throws {
        let analysis = try await analyse { journal in
            journal.application(at: t0, "launch")
            journal.accelerometer(at: t0 + 1, x: 0, y: -1, z: 0)
            journal.accelerometer(at: t0 + 2, x: 0, y: -1, z: 0)
            journal.tap(at: t0 + 3, x: 10, y: 10, view: "A")
        }
        let overview = try analysis.result(Overview.self)
        XCTAssertEqual(overview.eventCount, 5)
        XCTAssertEqual(overview.start, t0)
        XCTAssertEqual(overview.end, t0 + 3.1)
        XCTAssertEqual(overview.duration, 3.1, accuracy: 1e-6)
        XCTAssertEqual(overview.eventsPerClass.map(\.eventClass), ["DeviceSensorEvent", "UserInputEvent", "ApplicationEvent"])
        XCTAssertEqual(overview.eventsPerClass.map(\.count), [2, 2, 1])
        XCTAssertEqual(overview.testUser, "Jack")
        XCTAssertEqual(overview.devices.map(\.model), ["iPhone3,1"])
    }

    func testScreenshotsAreOrderedByTimeDeduplicatedAndIndexed() async throws {
        let analysis = try await analyse { journal in
            journal.viewDidAppear(at: t0 + 1, view: "A", transition: "launch", stack: ["A"], screenshot: image("a"))
            journal.viewDidAppear(at: t0 + 2, view: "B", transition: "push", stack: ["A", "B"], screenshot: image("b"))
            journal.viewDidAppear(at: t0 + 3, view: "A", transition: "pop", stack: ["A"], screenshot: image("a"))
        }
        let screenshots = try analysis.result(Screenshots.self)
        XCTAssertEqual(screenshots.shots.map(\.index), [0, 1])
        XCTAssertEqual(screenshots.shots.map(\.view), ["A", "B"])
        XCTAssertEqual(screenshots.shots.map(\.blob.size), [5, 5])
        XCTAssertEqual(screenshots.takes.map(\.index), [0, 1, 0])
        XCTAssertNil(screenshots.shown(at: t0 + 0.5))
        XCTAssertEqual(screenshots.shown(at: t0 + 1), 0)
        XCTAssertEqual(screenshots.shown(at: t0 + 2.5), 1)
        XCTAssertEqual(screenshots.shown(at: t0 + 9), 0)
        XCTAssertEqual(screenshots.shots[0].screen, Size(width: 320, height: 480), "the device's screen without a UI state tree")
    }

    func testTouchHeatmapMapsEachTouchToTheLastScreenshotBeforeIt() async throws {
        let analysis = try await analyse { journal in
            journal.tap(at: t0, x: 1, y: 1, view: "A")
            journal.viewDidAppear(at: t0 + 1, view: "A", transition: "launch", stack: ["A"], screenshot: image("a"))
            journal.tap(at: t0 + 2, x: 10, y: 20, view: "A")
            journal.swipe(at: t0 + 3, points: [(300, 100), (200, 100), (100, 100)], duration: 0.2, view: "A")
            journal.viewDidAppear(at: t0 + 4, view: "B", transition: "push", stack: ["A", "B"], screenshot: image("b"))
            journal.tap(at: t0 + 5, x: 30, y: 40, view: "B")
        }
        let heatmaps = try analysis.result(TouchHeatmaps.self)
        XCTAssertEqual(heatmaps.unmapped, 1)
        XCTAssertEqual(heatmaps.heatmaps, [
            Heatmap(screenshot: 0, view: "A", touches: [Point(x: 10, y: 20), Point(x: 300, y: 100)]),
            Heatmap(screenshot: 1, view: "B", touches: [Point(x: 30, y: 40)]),
        ])
    }

    func testGesturePathsKeepTheFingersWayAndTheRecognisedGesture() async throws {
        let analysis = try await analyse { journal in
            journal.viewDidAppear(at: t0, view: "A", transition: "launch", stack: ["A"], screenshot: image("a"))
            journal.swipe(at: t0 + 1, points: [(300, 100), (200, 101), (100, 100)], duration: 0.2, view: "A")
            journal.tap(at: t0 + 2, x: 5, y: 5, view: "A")
            journal.swipe(at: t0 + 3, points: [(50, 400), (50, 200)], duration: 0.5, view: "A", gesture: "scroll")
        }
        let paths = try analysis.result(GesturePaths.self).paths
        XCTAssertEqual(paths.map(\.kind), ["swipe", "scroll"])
        XCTAssertEqual(paths.map(\.screenshot), [0, 0])
        XCTAssertEqual(paths[0].points, [Point(x: 300, y: 100), Point(x: 200, y: 101), Point(x: 100, y: 100)])
        XCTAssertEqual(paths[1].duration, 0.5, accuracy: 1e-6)
    }

    /// Strokes are the largest result on the blackboard (one per touch-down): a tap holds no path of its own,
    /// and the strokes on one element and one view share them instead of holding copies.
    func testStrokesShareTheirElementAndViewAndATapHoldsNoPath() async throws {
        let view = "ComposeNoteViewController"
        let analysis = try await analyse { journal in
            for index in 0..<3 { journal.tap(at: t0 + Double(index), x: 250, y: 40, view: view, target: button) }
            journal.swipe(at: t0 + 5, points: [(300, 100), (200, 101)], duration: 0.2, view: view)
            journal.swipe(at: t0 + 6, points: [(10, 10), (12, 10)], duration: 0.1, view: view)
            journal.swipe(at: t0 + 7, points: [(300, 100), (250, 100), (250, 100), (200, 101), (150, 102)], duration: 0.4, view: view)
        }
        let strokes = try analysis.result(Interactions.self).strokes.collected()
        // A finger that lifts within the slop taps; a point where the finger stayed is not repeated.
        XCTAssertEqual(strokes.map(\.isTap), [true, true, true, false, true, false])
        XCTAssertEqual(strokes.map(\.path.count), [0, 0, 0, 1, 1, 3])
        XCTAssertEqual(strokes[3].points, [Point(x: 300, y: 100), Point(x: 200, y: 101)])
        XCTAssertEqual(strokes[5].points, [Point(x: 300, y: 100), Point(x: 250, y: 100), Point(x: 200, y: 101), Point(x: 150, y: 102)])
        XCTAssertEqual(strokes[0].target?.label, "UIButton \"Publish\"")
        XCTAssertTrue(strokes[0].sharedTarget === strokes[2].sharedTarget)
        XCTAssertNil(strokes[3].target)
        XCTAssertTrue(strokes.allSatisfy { $0.view == view })
        // One name's storage: each event's was decoded on its own.
        let storage = strokes.map { $0.view?.utf8.withContiguousStorageIfAvailable { UInt(bitPattern: $0.baseAddress) } }
        XCTAssertNotNil(storage[0])
        XCTAssertEqual(Set(storage).count, 1)
        XCTAssertLessThanOrEqual(MemoryLayout<Stroke>.stride, 96, "an element inline again?")
    }

    func testViewChangesGiveTheNavigationPathWithTransitionsStacksAndScreenshots() async throws {
        let analysis = try await analyse { journal in
            journal.viewDidAppear(at: t0, view: "Blogs", transition: "launch", stack: ["Blogs"], screenshot: image("blogs"))
            journal.viewDidAppear(at: t0 + 1, view: "Posts", transition: "push", stack: ["Blogs", "Posts"], screenshot: image("posts"))
            journal.viewDidAppear(at: t0 + 2, view: "Write", transition: "modal", stack: ["Blogs", "Posts", "Write"])
            journal.viewDidAppear(at: t0 + 3, view: "Posts", transition: "dismiss", stack: ["Blogs", "Posts"], screenshot: image("posts"))
            journal.viewDidAppear(at: t0 + 4, view: "Blogs", transition: "pop", stack: ["Blogs"], screenshot: image("blogs"))
        }
        let steps = try analysis.result(NavigationPath.self).steps
        XCTAssertEqual(steps.map(\.view), ["Blogs", "Posts", "Write", "Posts", "Blogs"])
        XCTAssertEqual(steps.map(\.transition), ["launch", "push", "modal", "dismiss", "pop"])
        XCTAssertEqual(steps.map(\.stackText), ["Blogs", "Blogs > Posts", "Blogs > Posts > Write", "Blogs > Posts", "Blogs"])
        XCTAssertEqual(steps.map(\.screenshot), [0, 1, 1, 1, 0], "a view change without a screenshot shows the last one")
    }

    func testViewDurationsCountTimeOnScreenWithoutTheBackgroundAndGroupFunctionalities() async throws {
        var options = AnalysisOptions()
        options.functionalities = ["A": "Reading", "C": "Reading"]
        let analysis = try await analyse(options: options) { journal in
            journal.viewDidAppear(at: t0, view: "A", transition: "launch", stack: ["A"])
            journal.viewDidAppear(at: t0 + 10, view: "B", transition: "push", stack: ["A", "B"])
            journal.application(at: t0 + 20, "background")
            journal.application(at: t0 + 25, "foreground")
            journal.viewDidAppear(at: t0 + 40, view: "C", transition: "push", stack: ["A", "B", "C"])
            journal.viewDidAppear(at: t0 + 45, view: "A", transition: "pop", stack: ["A"])
            journal.accelerometer(at: t0 + 50, x: 0, y: 0, z: 0)
        }
        let durations = try analysis.result(ViewDurations.self)
        XCTAssertEqual(durations.total, 45, accuracy: 1e-6)
        XCTAssertEqual(durations.views.map(\.name), ["B", "A", "C"])
        XCTAssertEqual(durations.views.map(\.seconds), [25, 15, 5])
        XCTAssertEqual(durations.views.map(\.visits), [1, 2, 1])
        XCTAssertEqual(durations.views[0].share, 25.0 / 45, accuracy: 1e-9)
        XCTAssertEqual(durations.functionalities.map(\.name), ["B", "Reading"])
        XCTAssertEqual(durations.functionalities.map(\.seconds), [25, 20])
    }

    func testGuidelineCheckerFindsSmallHitTargetsAndTextFieldsWithoutPlaceholderOncePerElement() async throws {
        let tree = JournalBuilder.node("UIWindow", frame: [0, 0, 320, 480], subviews: [
            JournalBuilder.node("UIView", frame: [0, 64, 320, 416], subviews: [
                JournalBuilder.node("UINavigationButton", frame: [5, 27, 50, 30], title: "Edit"),
                JournalBuilder.node("UIButton", frame: [10, 100, 44, 44], title: "OK"),
                JournalBuilder.node("UITextField", frame: [10, 150, 300, 31]),
                JournalBuilder.node("UITextField", frame: [10, 200, 300, 44], placeholder: "Title"),
                JournalBuilder.node("UILabel", frame: [10, 250, 30, 10], title: "tiny label"),
            ]),
        ])
        let analysis = try await analyse { journal in
            journal.viewDidAppear(at: t0, view: "Edit", transition: "launch", stack: ["Edit"], screenshot: image("e"), uiState: tree)
            journal.viewDidAppear(at: t0 + 5, view: "Edit", transition: "pop", stack: ["Edit"], screenshot: image("e"), uiState: tree)
        }
        let small = analysis.problems(.smallHitTarget)
        XCTAssertEqual(small.count, 2, "\(small.map(\.evidence))")
        XCTAssertEqual(small.map(\.frame), [Rect(x: 5, y: 27, width: 50, height: 30), Rect(x: 10, y: 150, width: 300, height: 31)])
        XCTAssertEqual(small[0].evidence, "UINavigationButton \"Edit\" is 50 × 30 points, under the 44 × 44 points of the iOS Human Interface Guidelines.")
        let placeholders = analysis.problems(.missingPlaceholder)
        XCTAssertEqual(placeholders.map(\.frame), [Rect(x: 10, y: 150, width: 300, height: 31)])
        XCTAssertEqual(placeholders.map(\.screenshot), [0])
    }

    func testTapsWithoutResponseWithinTheWindowAreUnresponsiveOncePerElement() async throws {
        let analysis = try await analyse { journal in
            journal.viewDidAppear(at: t0, view: "Family", transition: "launch", stack: ["Family"], screenshot: image("f"))
            journal.tap(at: t0 + 2, x: 100, y: 200, view: "Family", target: picture)      // nothing happens
            journal.tap(at: t0 + 4, x: 150, y: 250, view: "Family", target: picture)      // nothing again
            journal.tap(at: t0 + 6, x: 260, y: 40, view: "Family", target: button)
            journal.action(at: t0 + 6.1, view: "Family", sender: button)                  // answered at once
            journal.tap(at: t0 + 8, x: 260, y: 40, view: "Family", target: button)
            journal.action(at: t0 + 9.5, view: "Family", sender: button)                  // answered after 1.5 s
            journal.tap(at: t0 + 11, x: 2, y: 470, view: "Family")                          // the background, last event
        }
        let problems = analysis.problems(.unresponsiveTap)
        XCTAssertEqual(problems.map(\.occurrences), [2, 1, 1])
        XCTAssertEqual(problems.map(\.time), [t0 + 2, t0 + 8, t0 + 11])
        XCTAssertEqual(problems[0].evidence, "2 taps on UIImageView tree got no UI event and no screen change within 1 s.")
        XCTAssertEqual(problems[0].point, Point(x: 100, y: 200))
        XCTAssertEqual(problems[2].evidence, "A tap on the background got no UI event and no screen change within 1 s.")
    }

    func testThreeQuickTapsAtOneSpotAreRageTaps() async throws {
        let analysis = try await analyse { journal in
            for index in 0..<4 { journal.tap(at: t0 + 1 + Double(index) * 0.25, x: 100 + Double(index), y: 200, view: "A", target: picture) }
            for index in 0..<3 { journal.tap(at: t0 + 10 + Double(index) * 0.5, x: 100, y: 200, view: "A") }   // too slow
            for index in 0..<3 { journal.tap(at: t0 + 20 + Double(index) * 0.2, x: 100 + Double(index) * 40, y: 200, view: "A") }  // too far apart
        }
        let problems = analysis.problems(.rageTap)
        XCTAssertEqual(problems.count, 1)
        XCTAssertEqual(problems[0].occurrences, 4)
        XCTAssertEqual(problems[0].time, t0 + 1)
        XCTAssertEqual(problems[0].evidence, "4 taps on UIImageView tree within 0.8 s.")
    }

    func testAnInputAnsweredOnlyAfterTheFreezeTimeWhileTheUserRetriedIsAFreeze() async throws {
        let analysis = try await analyse { journal in
            journal.viewDidAppear(at: t0, view: "Write", transition: "launch", stack: ["Write"], screenshot: image("w"))
            journal.tap(at: t0 + 1, x: 260, y: 40, view: "Write", target: button)
            journal.tap(at: t0 + 2, x: 262, y: 41, view: "Write", target: button)
            journal.viewDidAppear(at: t0 + 5, view: "Posts", transition: "pop", stack: ["Posts"], screenshot: image("p"))
            // A tap beside a control, then the control: two inputs, no freeze (the first is unresponsive).
            journal.tap(at: t0 + 7, x: 10, y: 300, view: "Posts")
            journal.tap(at: t0 + 9, x: 260, y: 40, view: "Posts", target: button)
            journal.action(at: t0 + 9.1, view: "Posts", sender: button)
        }
        let freezes = try analysis.result(Freezes.self).freezes
        XCTAssertEqual(freezes, [Freeze(start: t0 + 1, end: t0 + 5, view: "Write", inputs: 2, strokes: 0...1)])
        let problems = analysis.problems(.freeze)
        XCTAssertEqual(problems.map(\.evidence), ["After a touch on UIButton \"Publish\" the screen did not change for 4 s, tried 2 times."])
        XCTAssertEqual(analysis.problems(.unresponsiveTap).map(\.time), [t0 + 7], "taps during the freeze are the freeze's")
    }

    func testGoingBackAndForthBetweenTwoViewsIsANavigationLoop() async throws {
        let analysis = try await analyse { journal in
            for (index, view) in ["List", "Detail", "List", "Detail", "List", "Settings", "List"].enumerated() {
                journal.viewDidAppear(at: t0 + Double(index) * 2, view: view, transition: index % 2 == 0 ? "pop" : "push", stack: [view])
            }
        }
        let loops = analysis.problems(.navigationLoop)
        XCTAssertEqual(loops.count, 1)
        XCTAssertEqual(loops[0].occurrences, 2)
        XCTAssertEqual(loops[0].time, t0)
        XCTAssertEqual(loops[0].evidence, "The user went from List to Detail and back 2 times in 8 s.")
    }

    func testGesturesVersusButtonsAreCountedPerView() async throws {
        let analysis = try await analyse { journal in
            journal.viewDidAppear(at: t0, view: "Timetable", transition: "launch", stack: ["Timetable"])
            journal.swipe(at: t0 + 1, points: [(300, 200), (100, 200)], duration: 0.2, view: "Timetable")
            journal.swipe(at: t0 + 2, points: [(100, 200), (300, 200)], duration: 0.2, view: "Timetable")
            journal.tap(at: t0 + 3, x: 20, y: 100, view: "Timetable", target: button)
            journal.action(at: t0 + 3.1, view: "Timetable", sender: button)
            journal.viewDidAppear(at: t0 + 4, view: "Menu", transition: "push", stack: ["Timetable", "Menu"])
            journal.swipe(at: t0 + 5, points: [(50, 400), (50, 100)], duration: 0.4, view: "Menu", gesture: "scroll")
        }
        let views = try analysis.result(InputModalities.self).views
        XCTAssertEqual(views.map(\.view), ["Timetable", "Menu"])
        XCTAssertEqual(views.map(\.gestureCount), [2, 1])
        XCTAssertEqual(views.map(\.buttonPresses), [1, 0])
        XCTAssertEqual(views.map(\.taps), [1, 0])
        XCTAssertEqual(views[1].gestures.map(\.kind), ["scroll"])
    }

    func testTasksTakeTimeAndInteractionsBetweenTheirMarkers() async throws {
        let analysis = try await analyse { journal in
            journal.tap(at: t0, x: 1, y: 1, view: "A")
            journal.marker(at: t0 + 10, "begin", task: "Publish a post")
            journal.tap(at: t0 + 11, x: 1, y: 1, view: "A")
            journal.viewDidAppear(at: t0 + 12, view: "B", transition: "push", stack: ["A", "B"])
            journal.swipe(at: t0 + 13, points: [(300, 200), (100, 200)], duration: 0.2, view: "B")
            journal.add("UserInputEvent", at: t0 + 14, ["type": .string("text"), "view": .string("B"), "inserted": .string("Hi")])
            journal.marker(at: t0 + 40, "end", task: "Publish a post")
            journal.marker(at: t0 + 50, "begin", task: "Add a photo")
        }
        let runs = try analysis.result(Tasks.self).runs
        XCTAssertEqual(runs, [
            TaskRun(name: "Publish a post", start: t0 + 10, end: t0 + 40, interactions: 3, viewChanges: 1),
            TaskRun(name: "Add a photo", start: t0 + 50, end: nil, interactions: 0, viewChanges: 0),
        ])
        XCTAssertEqual(runs[0].duration, 30)
    }

    func testTimelineHasEveryEventWithItsTypeSummaryAndScreenshot() async throws {
        let analysis = try await analyse { journal in
            journal.accelerometer(at: t0, x: 0.5, y: -1, z: 0)
            journal.viewDidAppear(at: t0 + 1, view: "A", transition: "launch", stack: ["A"], screenshot: image("a"))
            journal.tap(at: t0 + 2, x: 10, y: 20, view: "A", target: button)
        }
        // Read from the journal as the report writes it, not kept on the blackboard.
        var entries: [TimelineEntry] = []
        try analysis.result(Timeline.self).forEachEntry(screenshots: analysis.result(Screenshots.self)) { entries.append($0) }
        XCTAssertEqual(entries.map(\.eventClass), ["DeviceSensorEvent", "UserInterfaceEvent", "UserInputEvent", "UserInputEvent"])
        XCTAssertEqual(entries.map(\.type), ["accelerometer", "viewDidAppear", "touch", "touch"])
        XCTAssertEqual(entries.map(\.screenshot), [nil, 0, 0, 0])
        XCTAssertEqual(entries[0].summary, "x=0.5 y=-1 z=0")
        XCTAssertEqual(entries[1].summary, "transition=launch viewStack=[1] screenshot=<image 5 bytes>")
        XCTAssertEqual(entries[2].summary, "phase=began x=10 y=20 tapCount=1 target=UIButton \"Publish\"")
    }
}
