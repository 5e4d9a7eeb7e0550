public import OrderedCollections
public import MuEvalWire

/// A platform sensor (accelerometer, battery, location, microphone, …) that records through the library.
/// The session's selection (`<welcome>`) switches it: before the first welcome every sensor runs (the
/// session is not known yet); then only those selected, started and stopped as selections change.
/// A sensor not selected is stopped, so it costs nothing. `start` and `stop` are called on the
/// library's own task, one at a time: they should return quickly and do their sampling elsewhere.
///
/// UIKit's touches, view appearances and screenshots attach the same way (docs/CAPTURE-LIBRARY.md).
public protocol CaptureSensor: AnyObject, Sendable {
    /// What the sensor records, as the selection names it: `.event(eventClass: "DeviceSensorEvent",
    /// sensor: "battery")`, or `.media(.audio)` for the microphone.
    var produces: Selectable { get }
    func start(_ recorder: SensorRecorder)
    func stop()
}

/// What a running sensor records with.
public struct SensorRecorder: Sendable {
    let manager: CaptureManager
    let sensor: String

    /// A DeviceSensorEvent with this sensor's name.
    public func reading(_ values: OrderedDictionary<String, PlistValue>) {
        manager.record(.sensorReading(sensor, values))
    }

    public func record(_ event: CaptureEvent) {
        manager.record(event)
    }

    public func record(media chunk: WireMedia) {
        manager.record(media: chunk)
    }
}

extension Selectable {
    /// The name a sensor goes by in the selection.
    var sensorName: String {
        switch self {
        case .event(let eventClass, let sensor): sensor ?? eventClass
        case .media(let kind): kind.sensor
        }
    }
}
