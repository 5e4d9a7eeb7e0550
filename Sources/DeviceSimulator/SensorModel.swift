internal import Foundation
internal import MuEvalCapture
internal import MuEvalWire
internal import OrderedCollections
internal import WireProtocol

/// The phone's sensors (seed 004's modules): periodic accelerometer, location and battery samples, and
/// network and orientation changes. Readings drift plausibly and follow only from the seed.
/// With `ParticipantBehaviour.shakes`, a burst of accelerometer samples when the tester shakes the phone; with
/// `frameTiming`, the capture library's frame-timing readings, some views janky (chosen by the seed).
struct SensorModel {
    static let orientations = ["portrait", "portraitUpsideDown", "landscapeLeft", "landscapeRight"]

    /// Sampling periods in simulated seconds: a capture library samples slowly to spare the battery.
    private static let accelerometerPeriod = 2.0
    private static let locationPeriod = 15.0
    private static let batteryPeriod = 60.0

    private var random: SeededGenerator
    private var battery: Double
    private var latitude: Double
    private var longitude: Double
    private var network = "wifi"
    private var orientation = "portrait"
    // Nothing is sampled before the app launches (`snapshot`) or after it terminates (`stop`).
    private var nextAccelerometer = Double.infinity
    private var nextLocation = Double.infinity
    private var nextBattery = Double.infinity
    /// Shakes and frames draw from streams of their own: turning them on changes no other reading.
    private var motion: SeededGenerator
    private var frames: FrameModel?

    init(random: SeededGenerator, location: [Double]?, frameTiming views: [String]? = nil) {
        self.random = random
        motion = random.derived(1)
        frames = views.map { FrameModel(views: $0, random: random.derived(2)) }
        battery = (self.random.uniform(0.55...0.98) * 100).rounded() / 100
        // The thesis's lab (TU München, Garching) when the scenario names no place.
        latitude = location?.first ?? 48.2625
        longitude = location?.dropFirst().first ?? 11.6680
    }

    /// Every sensor at once, as the library reports them when it starts.
    mutating func snapshot(at time: Double) -> [SimulatedEvent] {
        nextAccelerometer = time + Self.accelerometerPeriod
        nextLocation = time + Self.locationPeriod
        nextBattery = time + Self.batteryPeriod
        return [accelerometer(at: time), location(at: time), batteryLevel(at: time), networkEvent(at: time), orientationEvent(at: time)]
    }

    mutating func stop() {
        nextAccelerometer = .infinity
        nextLocation = .infinity
        nextBattery = .infinity
    }

    /// The periodic samples due up to `time`, oldest first.
    mutating func samples(until time: Double) -> [SimulatedEvent] {
        var events: [SimulatedEvent] = []
        while true {
            let next = min(nextAccelerometer, nextLocation, nextBattery)
            guard next <= time else { return events }
            if next == nextAccelerometer {
                events.append(accelerometer(at: next))
                nextAccelerometer += Self.accelerometerPeriod
            } else if next == nextLocation {
                events.append(location(at: next))
                nextLocation += Self.locationPeriod
            } else {
                events.append(batteryLevel(at: next))
                nextBattery += Self.batteryPeriod
            }
        }
    }

    mutating func rotate(to orientation: String, at time: Double) -> SimulatedEvent {
        self.orientation = orientation
        return orientationEvent(at: time)
    }

    /// Coming back from the background the phone may have changed networks (Wi-Fi lost, on the cell network).
    mutating func networkMayChange(at time: Double) -> SimulatedEvent? {
        guard random.uniform(0...1) < 0.5 else { return nil }
        network = network == "wifi" ? "wwan" : "wifi"
        return networkEvent(at: time)
    }

    /// Gravity along the axis pointing down in this orientation.
    private var gravity: (x: Double, y: Double) {
        switch orientation {
        case "portraitUpsideDown": (0, 1)
        case "landscapeLeft": (1, 0)
        case "landscapeRight": (-1, 0)
        default: (0, -1)
        }
    }

    private mutating func accelerometer(at time: Double) -> SimulatedEvent {
        // Gravity plus the tremor of a hand.
        acceleration(at: time, x: gravity.x + random.gaussian(sigma: 0.03), y: gravity.y + random.gaussian(sigma: 0.03),
                     z: -0.12 + random.gaussian(sigma: 0.03))
    }

    private func acceleration(at time: Double, x: Double, y: Double, z: Double) -> SimulatedEvent {
        sensor("accelerometer", at: time, ["x": .real(rounded(x, 3)), "y": .real(rounded(y, 3)), "z": .real(rounded(z, 3))])
    }

    /// The tester shakes the phone from `time`: side to side at 4–6 Hz with 1.8–2.8 g for 0.8–1.4 s, sampled at
    /// 50 Hz (a capture library samples fast while the phone moves hard); returns the samples and how long it took.
    mutating func shake(at time: Double) -> (events: [SimulatedEvent], duration: Double) {
        let duration = motion.uniform(0.8...1.4), frequency = motion.uniform(4...6), amplitude = motion.uniform(1.8...2.8)
        // Mostly across the screen, partly along it.
        let tilt = motion.uniform(-0.4...0.4)
        let rate = 50.0
        let samples = (0...Int(duration * rate)).map { index in
            let t = Double(index) / rate
            let swing = amplitude * sin(2 * .pi * frequency * t)
            return acceleration(at: time + t, x: gravity.x + swing * cos(tilt) + motion.gaussian(sigma: 0.05),
                                y: gravity.y + swing * sin(tilt) + motion.gaussian(sigma: 0.05), z: -0.12 + motion.gaussian(sigma: 0.05))
        }
        return (samples, duration)
    }

    /// The frame-timing readings an event brings about (nothing without `frameTiming`): at a view change the open
    /// reading of the view before, the transition (or the launch) and the frames of its animation; after a scroll,
    /// swipe or drag the frames it rendered. Readings are stamped with the event's time, as a library sends them
    /// when a second of rendering is full or the view changes.
    mutating func frameTiming(after event: SimulatedEvent) -> [SimulatedEvent] {
        guard var model = frames else { return [] }
        defer { frames = model }
        return model.readings(after: event).map { sensor(FrameTiming.sensor, at: event.time, $0.fields) }
    }

    private mutating func location(at time: Double) -> SimulatedEvent {
        // A walk at about 1 m/s: 1e-5 degrees is about a metre.
        latitude += random.gaussian(sigma: 5e-5)
        longitude += random.gaussian(sigma: 5e-5)
        return sensor("location", at: time, [
            "latitude": .real(rounded(latitude, 6)),
            "longitude": .real(rounded(longitude, 6)),
            "altitude": .real(rounded(480 + random.gaussian(sigma: 2), 1)),
            "horizontalAccuracy": .real(rounded(random.uniform(5...65), 0)),
        ])
    }

    private mutating func batteryLevel(at time: Double) -> SimulatedEvent {
        battery = max(0.05, battery - 0.01)
        return sensor("battery", at: time, ["level": .real(rounded(battery, 2)), "state": .string("unplugged")])
    }

    private func networkEvent(at time: Double) -> SimulatedEvent {
        sensor("network", at: time, ["reachable": .bool(true), "via": .string(network)])
    }

    private func orientationEvent(at time: Double) -> SimulatedEvent {
        sensor("orientation", at: time, ["orientation": .string(orientation)])
    }

    private func sensor(_ name: String, at time: Double, _ values: OrderedDictionary<String, PlistValue>) -> SimulatedEvent {
        var fields: OrderedDictionary<String, PlistValue> = ["sensor": .string(name)]
        fields.merge(values) { current, _ in current }
        return SimulatedEvent(.deviceSensor, at: time, fields)
    }
}

func rounded(_ value: Double, _ digits: Int) -> Double {
    let factor = pow(10, Double(digits))
    return (value * factor).rounded() / factor
}

/// The frames a simulated app renders: 60 Hz, each view with a hitch-time ratio of its own (ms of hitches per second
/// of rendering), most smooth, some janky; the readings come from the capture library's own aggregator.
struct FrameModel {
    /// Ratios (ms/s) of a smooth, a sluggish and a janky view, as Apple rates them: good, warning, critical.
    static let smooth = 0.0...3.0, sluggish = 6.0...9.0, janky = 15.0...40.0
    /// UIKit's push and modal animation, as the player's clock moves.
    static let animation = 0.35
    private static let refreshRate = 60.0

    private var random: SeededGenerator
    private var aggregator = FrameTiming.Aggregator(refreshRate: refreshRate)
    /// Per view: its hitch ratio, and how long it takes to set up before its transition's first frame.
    private var ratio: [String: Double] = [:]
    private var setup: [String: ClosedRange<Double>] = [:]
    /// Refresh intervals of hitches owed per view, so that short bursts add up to the view's ratio.
    private var owed: [String: Double] = [:]
    private var launchStart: Double?

    /// A quarter of the views sluggish, a quarter janky, at least one janky.
    init(views: [String], random: SeededGenerator) {
        self.random = random
        var levels = views.map { _ in self.random.uniform(0...1) }
        if !levels.contains(where: { $0 >= 0.75 }), let pick = levels.indices.randomElement(using: &self.random) { levels[pick] = 1 }
        for (view, level) in zip(views, levels) {
            let (range, setUp) = level >= 0.75 ? (Self.janky, 0.4...0.9) : level >= 0.5 ? (Self.sluggish, 0.15...0.3) : (Self.smooth, 0.02...0.08)
            ratio[view] = self.random.uniform(range)
            setup[view] = setUp
        }
    }

    mutating func readings(after event: SimulatedEvent) -> [FrameTiming.Reading] {
        let type = event.fields["type"].flatMap { if case .string(let text) = $0 { text } else { nil } }
        let view = event.fields["view"].flatMap { if case .string(let text) = $0 { text } else { nil } }
        switch (event.eventClass, type) {
        case (.application, "launch"):
            // The process started a moment before the library's launch event.
            launchStart = event.time - random.uniform(0.1...0.3)
            return []
        case (.application, "background"), (.application, "terminate"):
            return aggregator.flush().map { [$0] } ?? []
        case (.userInterface, "viewDidAppear"):
            guard let view else { return [] }
            if let start = launchStart {
                launchStart = nil
                let launch = FrameTiming.Aggregator.launch(event.time - start, view: view).map { [$0] } ?? []
                return aggregator.viewAppeared(view) + launch
            }
            let transition = Self.animation + random.uniform(setup[view] ?? Self.smooth)
            return aggregator.viewAppeared(view, transition: transition) + render(Self.animation, in: view)
        case (.userInput, "gesture"):
            guard let view, case .string(let kind)? = event.fields["gesture"], ["scroll", "swipe", "drag"].contains(kind),
                  case .real(let duration)? = event.fields["duration"] else { return [] }
            // A scroll decelerates after the finger lifts.
            return render(duration + (kind == "scroll" ? 0.4 : 0.1), in: view)
        default:
            return []
        }
    }

    /// `duration` seconds of frames in `view`: one refresh each, but for the hitches the view owes, a frame on
    /// screen for two to five refreshes where they fall.
    private mutating func render(_ duration: Double, in view: String) -> [FrameTiming.Reading] {
        let refreshes = max(1, Int(saturating: (duration * Self.refreshRate).rounded()))
        let ratio = ratio[view] ?? 0
        owed[view, default: 0] += ratio / 1000 * duration * Self.refreshRate
        // A janky view hitches in every burst, however short (what it owes then goes below zero for a while).
        let least = ratio >= Self.janky.lowerBound ? 1 : 0
        var late = min(max(Int(saturating: owed[view]!.rounded(.down)), least), refreshes - 1)
        owed[view]! -= Double(late)
        var intervals: [Int] = []
        var left = refreshes
        while left > 0 {
            let missed = late > 0 && random.chance(Double(late) / Double(left)) ? min(late, Int(saturating: random.uniform(1...4).rounded())) : 0
            let taken = min(left, missed + 1)
            intervals.append(taken)
            late -= taken - 1
            left -= taken
        }
        owed[view]! += Double(late)
        return intervals.compactMap { aggregator.framePresented(interval: Double($0) / Self.refreshRate) }
    }
}
