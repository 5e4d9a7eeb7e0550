import DeviceSimulator
import MuEvalWire
import OrderedCollections
import Testing
import WireProtocol

/// The simulator's motion and frame timing: off by default (the ideal tester's bytes are what they were), a burst of
/// accelerometer samples when a tester who shakes fails a task, and frame-timing readings with janky views, both
/// deterministic by seed. And font sizes in the UI state trees.
@Suite struct SensorModelTests {
    typealias Event = ParticipantBehaviourTests.Event

    static func sensor(_ name: String, _ events: [Event]) -> [Event] { events.filter { $0["sensor"] == .string(name) } }

    static func number(_ value: PlistValue?) -> Double {
        switch value {
        case .real(let number)?: number
        case .integer(let number)?: Double(number)
        default: .nan
        }
    }

    @Test func byDefaultNoShakeAndNoFrameTiming() throws {
        var failing = ParticipantBehaviour()
        failing.failedTasks = ["Edit blog posting"]
        for behaviour in [ParticipantBehaviour.ideal, failing] {
            let events = try ParticipantBehaviourTests.pass(behaviour)
            #expect(Self.sensor("frameTiming", events).isEmpty)
            let times = Self.sensor("accelerometer", events).map(ParticipantBehaviourTests.time)
            // Every 2 s, as before.
            #expect(zip(times, times.dropFirst()).allSatisfy { abs($1 - $0 - 2) < 1e-6 || $1 - $0 > 2 })
        }
    }

    @Test func aTesterWhoShakesShakesThePhoneWhenATaskGoesWrong() throws {
        var behaviour = ParticipantBehaviour()
        behaviour.failedTasks = ["Edit blog posting"]
        behaviour.shakes = true
        let events = try ParticipantBehaviourTests.pass(behaviour)
        let samples = Self.sensor("accelerometer", events)
        let strong = samples.filter { abs(Self.number($0["x"])) > 1.5 || abs(Self.number($0["y"]) + 1) > 1.5 }
        #expect(strong.count >= 10, "a burst of strong samples: \(strong.count)")
        // At 50 Hz, within the failed task.
        let times = strong.map(ParticipantBehaviourTests.time)
        #expect(times.last! - times.first! < 1.5)
        let task = ParticipantBehaviourTests.during("Edit blog posting", events)
        #expect(task.contains { $0["sensor"] == .string("accelerometer") && strong.contains($0) })
        // Turning shaking on adds the burst and changes no other sample.
        var calm = behaviour
        calm.shakes = false
        let before = Self.sensor("accelerometer", try ParticipantBehaviourTests.pass(calm)).map { [$0["x"], $0["y"], $0["z"]] }
        let periodic = samples.filter { sample in before.contains([sample["x"], sample["y"], sample["z"]]) }
        #expect(periodic.count >= before.count - 1)
        #expect(try ParticipantBehaviourTests.bytes(behaviour) == ParticipantBehaviourTests.bytes(behaviour), "deterministic")
    }

    @Test func framesArePerViewWithSomeViewsJankyBySeed() throws {
        var behaviour = ParticipantBehaviour()
        behaviour.frameTiming = true
        var ratios: [[String: Double]] = []
        for seed: UInt64 in [1, 2, 3] {
            let events = try ParticipantBehaviourTests.pass(behaviour, seed: seed)
            let readings = Self.sensor("frameTiming", events)
            #expect(readings.filter { $0["kind"] == .string("launch") }.count == 1)
            #expect(readings.filter { $0["kind"] == .string("transition") }.count == ParticipantBehaviourTests.appeared(events).count - 1)
            var hitch: [String: Double] = [:], rendering: [String: Double] = [:]
            for reading in readings where reading["kind"] == .string("frames") {
                let view = ScenarioPlaybackTests.string(reading["view"])
                hitch[view, default: 0] += Self.number(reading["hitchTime"])
                rendering[view, default: 0] += Self.number(reading["duration"])
                #expect(Self.number(reading["duration"]) <= 1 + 1e-9, "a second of rendering at most")
            }
            let ratio = hitch.mapValues { $0 * 1000 }.merging(rendering) { $0 / $1 }
            #expect(ratio.values.contains { $0 > 10 }, "seed \(seed): a janky view among \(ratio)")
            #expect(ratio.values.contains { $0 < 5 }, "seed \(seed): a smooth view among \(ratio)")
            ratios.append(ratio)
            #expect(try ParticipantBehaviourTests.bytes(behaviour, seed: seed) == ParticipantBehaviourTests.bytes(behaviour, seed: seed))
        }
        #expect(ratios[0] != ratios[1], "the seed chooses")
        // Frame timing changes no other event.
        let plain = try ParticipantBehaviourTests.pass(.ideal).filter { $0["sensor"] != .string("frameTiming") }.map { $0.filter { $0.key != "seq" } }
        let timed = try ParticipantBehaviourTests.pass(behaviour).filter { $0["sensor"] != .string("frameTiming") }.map { $0.filter { $0.key != "seq" } }
        #expect(plain == timed)
    }

    @Test func uiStateTreesCarryFontSizes() throws {
        let events = try ParticipantBehaviourTests.pass(.ideal)
        let edit = try #require(ParticipantBehaviourTests.appeared(events).first { $0["view"] == .string("EditPostViewController") })
        let nodes = ScenarioPlaybackTests.flatten(edit["uiState"]!)
        #expect(nodes.contains { $0["title"] == .string("Add Photo") && $0["fontSize"] == .real(10) })
        #expect(nodes.contains { $0["placeholder"] == .string("Title") && $0["fontSize"] == .real(15) })
    }
}
