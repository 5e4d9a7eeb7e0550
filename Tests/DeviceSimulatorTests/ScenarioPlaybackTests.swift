import DeviceSimulator
import Foundation
import MuEvalWire
import OrderedCollections
import WireProtocol
import XCTest

/// Scenario playback, read back through the daemon's own decoder: the event sequence, its determinism, the
/// touches, the view changes with their UI state trees and screenshots.
final class ScenarioPlaybackTests: XCTestCase {
    static func options(_ scenario: String = "wordpress", seed: UInt64 = 42, events: Int? = nil) throws -> SimulationOptions {
        var options = SimulationOptions(scenario: try ScenarioLoader.load(scenario), epoch: 1_298_155_386)
        options.seed = seed
        options.events = events
        return options
    }

    /// One pass of a scenario, decoded as muevald decodes it.
    static func pass(_ scenario: String = "wordpress", seed: UInt64 = 42) throws -> [OrderedDictionary<String, PlistValue>] {
        try decode(Simulation.plannedEvents(try options(scenario, seed: seed), device: 0).flatMap(\.bytes))
    }

    static func decode(_ bytes: [UInt8]) throws -> [OrderedDictionary<String, PlistValue>] {
        var decoder = WireDecoder()
        decoder.append(bytes)
        var events: [OrderedDictionary<String, PlistValue>] = []
        while let result = decoder.next() {
            guard case .event(let event) = try result.get() else { continue }
            let value = try TypedJSON.decode(event.payload) { sha in event.blobs.first { $0.sha256 == sha }!.bytes }
            guard case .dict(let dict) = value else { throw NotAnEvent(value: value) }
            events.append(dict)
        }
        return events
    }

    func testTheWordpressPassFollowsTheThesisDemoScenario() throws {
        let events = try Self.pass()
        XCTAssertGreaterThan(events.count, 100)
        XCTAssertEqual(events.map { $0["seq"] }, (1...events.count).map { PlistValue.integer(Int64($0)) })
        let times = events.map { event -> Double in
            guard case .real(let time)? = event["timestamp"] else { XCTFail("timestamp is not a <real>: \(event)"); return 0 }
            return time
        }
        XCTAssertEqual(times, times.sorted(), "timestamps never run backwards")
        XCTAssertEqual(times.first, 1_298_155_386)

        XCTAssertEqual(Set(events.compactMap { $0["class"] }), Set(EventClass.allCases.map { .string($0.rawValue) }))
        XCTAssertEqual(Self.strings(events, "ApplicationEvent", "type"), ["launch", "background", "foreground", "exception", "terminate"])
        XCTAssertEqual(Set(Self.strings(events, "DeviceSensorEvent", "sensor")), ["accelerometer", "location", "battery", "network", "orientation"])
        XCTAssertEqual(Self.strings(events, "CustomEvent", "call"), [
            #"[monitor beginEvent: @"Open the blog"]"#, #"[monitor endEvent: @"Open the blog"]"#,
            #"[monitor beginEvent: @"Edit blog posting"]"#, #"[monitor endEvent: @"Edit blog posting"]"#,
            #"[monitor beginEvent: @"Publish blog posting"]"#, #"[monitor endEvent: @"Publish blog posting"]"#,
        ])
        XCTAssertTrue(Self.strings(events, "CustomEvent", "name").contains("User selects category “Work”"))

        let appeared = events.filter { $0["type"] == .string("viewDidAppear") }
        XCTAssertEqual(appeared.map { Self.string($0["transition"]) + " " + Self.string($0["view"]) }, [
            "launch BlogsViewController", "push PostsViewController", "modal EditPostViewController",
            "push CategoriesViewController", "pop EditPostViewController", "dismiss PostsViewController", "pop BlogsViewController",
        ])
        XCTAssertEqual(appeared[3]["viewStack"], .array(["BlogsViewController", "PostsViewController", "EditPostViewController",
                                                         "CategoriesViewController"].map(PlistValue.string)))
        let actions = events.filter { $0["type"] == .string("action") }.map { Self.string($0["action"]) }
        XCTAssertEqual(actions, ["showAddPostView:", "showCategoriesView:", "popViewControllerAnimated:", "showPhotoPicker:",
                                 "publish:", "popViewControllerAnimated:"])
        let gestures = Set(events.filter { $0["type"] == .string("gesture") }.map { Self.string($0["gesture"]) })
        XCTAssertEqual(gestures, ["tap", "scroll", "swipe"])
        let phases = Set(events.filter { $0["type"] == .string("touch") }.map { Self.string($0["phase"]) })
        XCTAssertEqual(phases, ["began", "moved", "ended"])
        let typed = events.filter { $0["type"] == .string("text") }.map { Self.string($0["text"]) }
        XCTAssertTrue(typed.contains("A weekend in the mountains"), "\(typed)")
        XCTAssertTrue(typed.contains("travel, alps"), "\(typed)")
    }

    func testTheSameSeedSendsTheSameBytesAndAnotherSeedOthers() throws {
        let first = Simulation.plannedEvents(try Self.options(seed: 7, events: 400), device: 0)
        let again = Simulation.plannedEvents(try Self.options(seed: 7, events: 400), device: 0)
        let other = Simulation.plannedEvents(try Self.options(seed: 8, events: 400), device: 0)
        XCTAssertEqual(first.count, 400)
        XCTAssertEqual(first.flatMap(\.bytes), again.flatMap(\.bytes))
        XCTAssertNotEqual(first.flatMap(\.bytes), other.flatMap(\.bytes))
        // Beyond one pass the scenario starts over: the app is launched again.
        let launches = try Self.decode(first.flatMap(\.bytes)).filter { $0["type"] == .string("launch") }
        XCTAssertGreaterThan(launches.count, 1)
        // Each device of a run is its own phone, with its own id and its own choices.
        let options = try Self.options(seed: 7, events: 50)
        XCTAssertNotEqual(Simulation.hello(options, device: 0), Simulation.hello(options, device: 1))
        XCTAssertNotEqual(Simulation.plannedEvents(options, device: 0).flatMap(\.bytes), Simulation.plannedEvents(options, device: 1).flatMap(\.bytes))
    }

    func testTouchesLandInsideWhatTheyTouchAndMissesHitNoControl() throws {
        for scenarioName in BuiltinScenarios.names {
            let scenario = try ScenarioLoader.load(scenarioName)
            var misses = 0
            for event in try Self.pass(scenarioName, seed: 3) where event["type"] == .string("touch") {
                guard case .real(let x)? = event["x"], case .real(let y)? = event["y"] else { return XCTFail("no x, y: \(event)") }
                let view = scenario.view(named: Self.string(event["view"]))!
                if case .dict(let target)? = event["target"] {
                    let element = view.element(Self.string(target["id"]))!
                    XCTAssertTrue(element.frame.contains(x: x, y: y), "\(scenarioName): (\(x), \(y)) outside \(element.id) \(element.frame)")
                }
                if !view.elements.contains(where: { $0.isInteractive && $0.frame.contains(x: x, y: y) }) { misses += 1 }
            }
            XCTAssertGreaterThanOrEqual(misses, 2, "\(scenarioName): a tester misses every control now and then")
        }
    }

    func testEveryViewChangeHasAListing42TreeAndAPNGOfTheScreen() throws {
        let events = try Self.pass()
        let appeared = events.filter { $0["type"] == .string("viewDidAppear") }
        var screenshots: [[UInt8]] = []
        for event in appeared {
            guard case .dict(let tree)? = event["uiState"], case .data(let png)? = event["screenshot"] else { return XCTFail("\(event.keys)") }
            XCTAssertEqual(tree["className"], .string("UIWindow"))
            XCTAssertEqual(tree["frame"], .dict(["height": .real(480), "width": .real(320), "x": .real(0), "y": .real(0)]))
            guard case .integer? = tree["address"], case .array(let subviews)? = tree["subviews"] else { return XCTFail("\(tree)") }
            XCTAssertFalse(subviews.isEmpty)
            screenshots.append(png)
        }
        // Blogs at launch and Blogs after the last pop are the same screen: the same bytes.
        XCTAssertEqual(screenshots.first, screenshots.last)
        XCTAssertNotEqual(screenshots[0], screenshots[1])
        // The tree names each element with its class, title and placeholder.
        let edit = Self.flatten(appeared[2]["uiState"]!)
        XCTAssertTrue(edit.contains { $0["className"] == .string("UITextField") && $0["placeholder"] == .string("Title") })
        XCTAssertTrue(edit.contains { $0["className"] == .string("UINavigationButton") && $0["title"] == .string("Publish") })

        // Decoded by an independent reader (python3's zlib and struct): the screen's size in pixels.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("muevalsim-png-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (index, png) in screenshots.enumerated() {
            try Data(png).write(to: directory.appendingPathComponent("\(index).png"))
        }
        let result = try run("/usr/bin/python3", ["-c", Self.pngChecker, directory.path])
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertEqual(result.output.split(separator: "\n").map(String.init), Array(repeating: "640x960 ok", count: screenshots.count))
    }

    func testScenarioFilesLoadAndBuiltinsRoundTripThroughTheFileFormat() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../scenarios").standardized
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
        XCTAssertFalse(files.isEmpty)
        for file in files {
            let scenario = try ScenarioLoader.load(folder.appendingPathComponent(file).path)
            var options = SimulationOptions(scenario: scenario, epoch: 0)
            options.seed = 1
            let events = try Self.decode(Simulation.plannedEvents(options, device: 0).flatMap(\.bytes))
            XCTAssertEqual(events.first?["type"], .string("launch"), file)
            XCTAssertEqual(events.last?["type"], .string("terminate"), file)
        }
        for name in BuiltinScenarios.names {
            let scenario = BuiltinScenarios.named(name)!
            XCTAssertEqual(try ScenarioLoader.decode(Data(ScenarioLoader.encode(scenario).utf8), source: name), scenario)
        }
    }

    func testAnInconsistentScenarioSaysWhereAndWhat() throws {
        var scenario = BuiltinScenarios.named("plainnote")!
        // Step 3: the first is a line said, the second opens the note.
        scenario.tasks[0].steps[2].on = "body"
        XCTAssertThrowsError(try ScenarioLoader.validate(scenario)) { error in
            XCTAssertEqual("\(error)", #"scenario is inconsistent: task "Write a note", step 3 (type): view "NoteViewController" has no element "body"; its elements: back, save, text"#)
        }
        scenario = BuiltinScenarios.named("plainnote")!
        scenario.tasks[1].steps.insert(Step(.navigate), at: 0)
        XCTAssertThrowsError(try ScenarioLoader.validate(scenario)) { error in
            XCTAssertTrue("\(error)".contains("says where with push, modal, pop or dismiss"), "\(error)")
        }
        XCTAssertThrowsError(try ScenarioLoader.decode(Data(#"{"name": "x"}"#.utf8), source: "x.json")) { error in
            XCTAssertEqual("\(error)", #"scenario file x.json is not valid JSON for a scenario (docs/SIMULATOR.md): the top level: "app" is missing"#)
        }
        XCTAssertThrowsError(try ScenarioLoader.load("no-such-scenario")) { error in
            XCTAssertTrue("\(error)".contains("built-in scenarios: wordpress, plainnote, campus"), "\(error)")
        }
    }

    // MARK: Helpers

    /// Checks signature, chunk CRCs and the zlib stream, and prints WIDTHxHEIGHT per file.
    static let pngChecker = #"""
    import os, struct, sys, zlib
    folder = sys.argv[1]
    for name in sorted(os.listdir(folder), key=lambda n: int(n.split('.')[0])):
        data = open(os.path.join(folder, name), 'rb').read()
        assert data[:8] == b'\x89PNG\r\n\x1a\n', name
        pos, idat, width, height = 8, b'', 0, 0
        while pos < len(data):
            length, kind = struct.unpack('>I4s', data[pos:pos + 8])
            body = data[pos + 8:pos + 8 + length]
            assert struct.unpack('>I', data[pos + 8 + length:pos + 12 + length])[0] == zlib.crc32(kind + body), name
            if kind == b'IHDR':
                width, height, depth, colour = struct.unpack('>IIBB', body[:10])
                assert (depth, colour) == (8, 3)
            if kind == b'IDAT':
                idat += body
            pos += 12 + length
        assert len(zlib.decompress(idat)) == (width + 1) * height, name
        print('%dx%d ok' % (width, height))
    """#

    static func string(_ value: PlistValue?) -> String {
        if case .string(let string)? = value { return string }
        return ""
    }

    static func strings(_ events: [OrderedDictionary<String, PlistValue>], _ eventClass: String, _ key: String) -> [String] {
        events.filter { $0["class"] == .string(eventClass) }.compactMap { $0[key] }.map { string($0) }
    }

    static func flatten(_ tree: PlistValue) -> [OrderedDictionary<String, PlistValue>] {
        guard case .dict(let node) = tree else { return [] }
        guard case .array(let subviews)? = node["subviews"] else { return [node] }
        return [node] + subviews.flatMap(flatten)
    }

    private func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}

/// A decoded event that is not a dictionary: the simulator wrote something muevald cannot store.
private struct NotAnEvent: Error, CustomStringConvertible {
    let value: PlistValue

    var description: String { "an event decoded to \(value), not a dictionary" }
}
