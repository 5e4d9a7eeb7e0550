import MuEvalCapture
import MuEvalWire
import Testing

/// The frame-timing sensor's sums: per second of rendering per view, dropped refreshes and hitch time, and the
/// readings' fields as the analysis reads them (docs/PROTOCOL.md, "Frame timing").
@Suite struct FrameTimingTests {
    static let refresh = 1.0 / 60

    @Test func aSecondOfFramesIsOneReadingWithItsHitches() throws {
        var aggregator = FrameTiming.Aggregator(refreshRate: 60)
        #expect(aggregator.viewAppeared("List").isEmpty, "nothing rendered yet, and no transition given")
        // 50 frames on time, two that stayed three refreshes (two dropped each), one at 1.4 refreshes (jitter,
        // not a drop), and on time to a second.
        var intervals = Array(repeating: Self.refresh, count: 50) + [3 * Self.refresh, 3 * Self.refresh, 1.4 * Self.refresh]
        var readings: [FrameTiming.Reading] = []
        while readings.isEmpty {
            if let reading = aggregator.framePresented(interval: intervals.first ?? Self.refresh) { readings.append(reading) }
            if !intervals.isEmpty { intervals.removeFirst() }
        }
        let reading = readings[0]
        #expect(reading.kind == .frames && reading.view == "List")
        #expect(abs(reading.duration - 1) < Self.refresh, "closed at a second of rendering: \(reading.duration)")
        #expect(reading.frames == 50 + 3 + 3)
        #expect(reading.dropped == 4)
        #expect(abs(reading.hitchTime - 4 * Self.refresh) < 1e-9)
        #expect(abs(reading.longestFrame - 3 * Self.refresh) < 1e-9)
        #expect(aggregator.flush() == nil, "the next second has not started")
    }

    @Test func aNewViewClosesTheOpenReadingAndAddsItsTransition() throws {
        var aggregator = FrameTiming.Aggregator()
        _ = aggregator.viewAppeared("List")
        for _ in 0..<21 { #expect(aggregator.framePresented(interval: Self.refresh) == nil) }
        let readings = aggregator.viewAppeared("Detail", transition: 0.42)
        #expect(readings.map(\.kind) == [.frames, .transition])
        #expect(readings[0].view == "List" && readings[0].frames == 21 && readings[0].dropped == 0 && readings[0].hitchTime == 0)
        #expect(readings[1].view == "Detail" && readings[1].from == "List" && readings[1].duration == 0.42)
        // Frames now count for Detail; a flush (the app goes to the background) sends what there is.
        _ = aggregator.framePresented(interval: Self.refresh)
        #expect(aggregator.flush()?.view == "Detail")
        #expect(aggregator.flush() == nil)
    }

    @Test func implausibleIntervalsAndRatesCountForNothing() {
        var aggregator = FrameTiming.Aggregator(refreshRate: .nan, window: -1)
        #expect(aggregator.refreshRate == 60 && aggregator.window == 1)
        for interval in [0, -1, .nan, .infinity] { #expect(aggregator.framePresented(interval: interval) == nil) }
        #expect(aggregator.flush() == nil)
        #expect(FrameTiming.Aggregator.launch(.nan, view: nil) == nil)
        #expect(aggregator.viewAppeared("A", transition: .infinity).isEmpty)
    }

    @Test func readingsAreDeviceSensorEventsWithTheDocumentedFields() throws {
        var aggregator = FrameTiming.Aggregator(refreshRate: 120, window: 0.05)
        _ = aggregator.viewAppeared("Map")
        var reading: FrameTiming.Reading?
        while reading == nil { reading = aggregator.framePresented(interval: 0.025) }
        let event = try #require(reading).event
        #expect(event.eventClass == .deviceSensor)
        #expect(Array(event.fields.keys) == ["sensor", "kind", "view", "duration", "frames", "dropped", "hitchTime", "longestFrame", "refreshRate"])
        #expect(event.fields["sensor"] == .string("frameTiming"))
        #expect(event.fields["frames"] == .integer(2) && event.fields["dropped"] == .integer(4))
        #expect(event.fields["duration"] == .real(0.05) && event.fields["hitchTime"] == .real(0.033333))
        #expect(event.fields["refreshRate"] == .real(120))
        let launch = try #require(FrameTiming.Aggregator.launch(0.5123456, view: "Map")).event
        #expect(Array(launch.fields.keys) == ["sensor", "kind", "view", "duration"])
        #expect(launch.fields["duration"] == .real(0.512346))
    }

    @Test func theSensorIsSelectedAsFrameTiming() {
        let sensor = FrameTimingSensor()
        #expect(sensor.produces == .event(eventClass: "DeviceSensorEvent", sensor: "frameTiming"))
        // Not started: frames are not counted, nothing is recorded, nothing fails.
        sensor.viewAppeared("A", transition: 0.3)
        sensor.framePresented(interval: 1.0 / 60)
        sensor.launched(after: 0.4)
        sensor.flush()
        sensor.stop()
    }
}
