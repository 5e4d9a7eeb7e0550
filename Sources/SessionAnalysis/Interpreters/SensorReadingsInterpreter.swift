internal import MuEvalWire
internal import WireProtocol

/// One accelerometer sample (DeviceSensorEvent `accelerometer`): acceleration along the device's axes, in g,
/// gravity included (a phone lying still reads about 1 g in all).
public struct AccelerationSample: Equatable, Sendable {
    public var time: Double
    public var x: Double
    public var y: Double
    public var z: Double

    public init(time: Double, x: Double, y: Double, z: Double) {
        (self.time, self.x, self.y, self.z) = (time, x, y, z)
    }

    var magnitude: Double { (x * x + y * y + z * z).squareRoot() }
}

/// One reading of the capture library's frame-timing sensor (DeviceSensorEvent `frameTiming`, docs/PROTOCOL.md):
/// a view's frames in up to a second of rendering, the app's launch, or a view transition.
public struct FrameTimingReading: Equatable, Sendable {
    public enum Kind: String, Sendable { case frames, launch, transition }

    public var time: Double
    public var kind: Kind
    public var view: String?
    /// `frames`: seconds of rendering covered; `launch`: process start to first frame; `transition`: its length.
    public var duration: Double
    public var frames = 0
    /// Display refreshes missed: a frame that took three refresh intervals dropped two.
    public var dropped = 0
    /// Seconds the frames were late, beyond their refresh interval.
    public var hitchTime = 0.0
    public var longestFrame = 0.0

    public init(time: Double, kind: Kind, view: String?, duration: Double) {
        (self.time, self.kind, self.view, self.duration) = (time, kind, view, duration)
    }
}

/// The device-motion and frame-timing readings of the session, decoded once for the detectors after it.
public struct SensorReadings: InterpretationResult, Equatable {
    public var acceleration: [AccelerationSample] = []
    public var frameTiming: [FrameTimingReading] = []
}

/// Reads the two sensors analysis interprets; the others (location, battery…) only the timeline shows.
public struct SensorReadingsInterpreter: JournalInterpreter {
    public let name = "Sensor readings"
    public let produces: [any InterpretationResult.Type] = [SensorReadings.self]

    public init() {}

    public func makeReader(for journal: SessionJournal) -> any JournalReader { Reader() }

    final class Reader: JournalReader {
        let eventClasses: Set<String>? = [EventClass.deviceSensor.rawValue]
        private var readings = SensorReadings()

        func read(_ event: JournalEvent) {
            switch event["sensor"]?.string {
            case "accelerometer":
                if let sample = SensorReadingsInterpreter.acceleration(event) { readings.acceleration.append(sample) }
            case "frameTiming":
                if let reading = SensorReadingsInterpreter.frameTiming(event) { readings.frameTiming.append(reading) }
            default:
                break
            }
        }

        func finish(into results: inout ResultStore) {
            results.add(readings)
        }
    }

    /// A sample needs all three axes (a non-finite one is missing already: `SessionJournal`).
    static func acceleration(_ event: JournalEvent) -> AccelerationSample? {
        guard let x = event["x"]?.number, let y = event["y"]?.number, let z = event["z"]?.number else { return nil }
        return AccelerationSample(time: event.time, x: x, y: y, z: z)
    }

    /// More frames than any display shows in a reading (a second at 1,000 Hz): sums over an hour stay far from overflow.
    static let maxFrames = 1_000

    /// A reading needs its kind and a plausible duration; counts are clamped to `0...maxFrames`.
    static func frameTiming(_ event: JournalEvent) -> FrameTimingReading? {
        guard let kind = event["kind"]?.string.flatMap(FrameTimingReading.Kind.init(rawValue:)),
              let duration = event["duration"]?.number.flatMap(Plausible.duration) else { return nil }
        var reading = FrameTimingReading(time: event.time, kind: kind, view: event.view, duration: duration)
        reading.frames = count(event["frames"])
        reading.dropped = count(event["dropped"])
        reading.hitchTime = event["hitchTime"]?.number.flatMap(Plausible.duration) ?? 0
        reading.longestFrame = event["longestFrame"]?.number.flatMap(Plausible.duration) ?? 0
        return reading
    }

    private static func count(_ value: PlistValue?) -> Int {
        min(max(0, Int(saturating: value?.number ?? 0)), maxFrames)
    }
}
