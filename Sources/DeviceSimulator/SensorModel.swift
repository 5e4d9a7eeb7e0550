internal import Foundation
internal import MuEvalWire
internal import OrderedCollections
internal import WireProtocol

/// The phone's sensors (seed 004's modules): periodic accelerometer, location and battery samples, and
/// network and orientation changes. Readings drift plausibly and follow only from the seed.
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

    init(random: SeededGenerator, location: [Double]?) {
        self.random = random
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

    private mutating func accelerometer(at time: Double) -> SimulatedEvent {
        // Gravity along the axis pointing down in this orientation, plus the tremor of a hand.
        let gravity: (x: Double, y: Double) = switch orientation {
        case "portraitUpsideDown": (0, 1)
        case "landscapeLeft": (1, 0)
        case "landscapeRight": (-1, 0)
        default: (0, -1)
        }
        return sensor("accelerometer", at: time, [
            "x": .real(rounded(gravity.x + random.gaussian(sigma: 0.03), 3)),
            "y": .real(rounded(gravity.y + random.gaussian(sigma: 0.03), 3)),
            "z": .real(rounded(-0.12 + random.gaussian(sigma: 0.03), 3)),
        ])
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
