internal import MuEvalWire
internal import NIOConcurrencyHelpers

/// The frame-timing sensor (docs/CAPTURE-LIBRARY.md, "Frame timing"): the platform glue tells it of each frame
/// presented, each view that appears and the launch; it records a DeviceSensorEvent `frameTiming` per second of
/// rendering per view, per transition and for the launch. While not selected it counts nothing.
public final class FrameTimingSensor: CaptureSensor {
    private struct State {
        var aggregator: FrameTiming.Aggregator
        var recorder: SensorRecorder?
    }

    private let state: NIOLockedValueBox<State>

    public var produces: Selectable { .event(eventClass: EventClass.deviceSensor.rawValue, sensor: FrameTiming.sensor) }

    /// `refreshRate`: the display's (`UIScreen.maximumFramesPerSecond`).
    public init(refreshRate: Double = 60) {
        state = NIOLockedValueBox(State(aggregator: FrameTiming.Aggregator(refreshRate: refreshRate)))
    }

    public func start(_ recorder: SensorRecorder) {
        state.withLockedValue { $0.recorder = recorder }
    }

    /// What was summed so far is recorded; frames while stopped are not counted.
    public func stop() {
        record { state in
            defer { state.recorder = nil }
            return state.aggregator.flush().map { [$0] } ?? []
        }
    }

    /// A frame presented `interval` seconds after the previous (from a CADisplayLink callback).
    public func framePresented(interval: Double) {
        record { state in
            guard state.recorder != nil else { return [] }
            return state.aggregator.framePresented(interval: interval).map { [$0] } ?? []
        }
    }

    /// A view appeared (from `viewDidAppear`), after a transition that took `transition` seconds when known.
    public func viewAppeared(_ view: String, transition: Double? = nil) {
        record { $0.aggregator.viewAppeared(view, transition: $0.recorder == nil ? nil : transition) }
    }

    /// The first frame is on screen, `duration` seconds after the process started.
    public func launched(after duration: Double) {
        record { state in
            guard state.recorder != nil else { return [] }
            return FrameTiming.Aggregator.launch(duration, view: state.aggregator.view).map { [$0] } ?? []
        }
    }

    /// Rendering paused (the app went to the background): what was summed so far is recorded.
    public func flush() {
        record { $0.aggregator.flush().map { [$0] } ?? [] }
    }

    /// Changes the state under the lock, then records the readings it gave outside it.
    private func record(_ change: (inout State) -> [FrameTiming.Reading]) {
        // The recorder from before the change: `stop` records its last reading with it.
        let (readings, recorder) = state.withLockedValue { state in
            let recorder = state.recorder
            return (change(&state), recorder)
        }
        guard let recorder else { return }
        for reading in readings { recorder.record(reading.event) }
    }
}
