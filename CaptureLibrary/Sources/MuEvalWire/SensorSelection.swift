/// Which events a session records (thesis 2.6.2, "sensors"): the names a developer chose when starting
/// it and that `<welcome>` tells the device. An empty selection records everything; otherwise an event
/// is recorded when its `class` or its `sensor` is selected. The server and the simulated device both
/// decide by this one rule, so that a device knows which of its events the session will hold.
public struct SensorSelection: Sendable, Equatable {
    private let names: Set<String>

    public init(_ names: some Sequence<String>) {
        self.names = Set(names)
    }

    public func selects(eventClass: String, sensor: String?) -> Bool {
        names.isEmpty || names.contains(eventClass) || sensor.map(names.contains) == true
    }

    /// Media are selected by their sensor: `microphone` for audio, `faceCamera` for video.
    public func selects(_ media: MediaKind) -> Bool {
        names.isEmpty || names.contains(media.sensor)
    }
}
