public import OrderedCollections
public import MuEvalWire

/// Frame timing (docs/CAPTURE-LIBRARY.md, "Frame timing"): what the display showed of the app, summed per second
/// of rendering and per view, so that analysis can rate each view's fluidity without a sample per frame.
public enum FrameTiming {
    /// The sensor's name in the session's selection and in its DeviceSensorEvents.
    public static let sensor = "frameTiming"

    /// One DeviceSensorEvent `frameTiming` (docs/PROTOCOL.md, "Frame timing").
    public struct Reading: Sendable, Equatable {
        public enum Kind: String, Sendable {
            /// Up to a second of one view's rendering.
            case frames
            /// Process start to the first frame.
            case launch
            /// A view transition, from its start to its last frame.
            case transition
        }

        public var kind: Kind
        public var view: String?
        /// `transition`: the view it came from.
        public var from: String?
        /// Seconds: of rendering covered (`frames`), or how long the launch or transition took.
        public var duration: Double
        public var frames = 0
        /// Refreshes that showed no new frame: a frame on screen for three refresh intervals dropped two.
        public var dropped = 0
        /// Seconds the frames were late: what a frame took beyond one refresh interval, when it dropped one.
        public var hitchTime = 0.0
        public var longestFrame = 0.0
        /// The display's refreshes per second.
        public var refreshRate: Double?

        public init(kind: Kind, view: String?, from: String? = nil, duration: Double) {
            self.kind = kind
            self.view = view
            self.from = from
            self.duration = duration
        }

        /// The event's fields, durations to the microsecond.
        public var fields: OrderedDictionary<String, PlistValue> {
            var fields: OrderedDictionary<String, PlistValue> = ["kind": .string(kind.rawValue)]
            fields["view"] = view.map(PlistValue.string)
            fields["from"] = from.map(PlistValue.string)
            fields["duration"] = .real(Self.microseconds(duration))
            if kind == .frames {
                fields["frames"] = .integer(Int64(frames))
                fields["dropped"] = .integer(Int64(dropped))
                fields["hitchTime"] = .real(Self.microseconds(hitchTime))
                fields["longestFrame"] = .real(Self.microseconds(longestFrame))
                fields["refreshRate"] = refreshRate.map(PlistValue.real)
            }
            return fields
        }

        public var event: CaptureEvent { .sensorReading(FrameTiming.sensor, fields) }

        private static func microseconds(_ seconds: Double) -> Double { (seconds * 1_000_000).rounded() / 1_000_000 }
    }

    /// Sums frames into readings: a view's reading closes after a second of rendering, when another view
    /// appears, and on `flush` (the app goes to the background, the sensor stops). A value type with no
    /// clock: the sensor and the simulator feed it.
    public struct Aggregator: Sendable {
        public let refreshRate: Double
        /// Seconds of rendering per reading.
        public let window: Double
        public private(set) var view: String?
        private var open: Reading?

        public init(refreshRate: Double = 60, window: Double = 1) {
            // A rate of no plausible display (0, negative, not finite) would make every frame a hitch or none.
            self.refreshRate = refreshRate.isFinite && refreshRate >= 1 ? refreshRate : 60
            self.window = window.isFinite && window > 0 ? window : 1
        }

        private var refreshInterval: Double { 1 / refreshRate }

        /// A frame was presented `interval` seconds after the one before (CADisplayLink's timestamp minus the
        /// previous one, while the app renders; the first frame after a pause passes one refresh interval).
        /// Returns the reading it completed, if any.
        public mutating func framePresented(interval: Double) -> Reading? {
            guard interval.isFinite, interval > 0 else { return nil }
            var reading = open ?? Reading(kind: .frames, view: view, duration: 0)
            reading.refreshRate = refreshRate
            reading.duration += interval
            reading.frames += 1
            // Refreshes the frame stayed on screen beyond its own; half an interval of slack for timer jitter.
            let late = (interval / refreshInterval).rounded() - 1
            if late >= 1, let missed = Int(exactly: min(late, 1_000)) {
                reading.dropped += missed
                reading.hitchTime += interval - refreshInterval
            }
            reading.longestFrame = max(reading.longestFrame, interval)
            guard reading.duration >= window else {
                open = reading
                return nil
            }
            open = nil
            return reading
        }

        /// Another view appears: the open reading of the last one, then the transition's (when its length is known).
        public mutating func viewAppeared(_ view: String, transition duration: Double? = nil) -> [Reading] {
            var readings = flush().map { [$0] } ?? []
            if let duration, duration.isFinite, duration >= 0 {
                readings.append(Reading(kind: .transition, view: view, from: self.view, duration: duration))
            }
            self.view = view
            return readings
        }

        /// The frames summed so far, as a reading; nil when there are none.
        public mutating func flush() -> Reading? {
            defer { open = nil }
            return open
        }

        /// The launch reading: `duration` seconds from process start to the first frame.
        public static func launch(_ duration: Double, view: String?) -> Reading? {
            guard duration.isFinite, duration >= 0 else { return nil }
            return Reading(kind: .launch, view: view, duration: duration)
        }
    }
}
