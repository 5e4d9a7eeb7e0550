internal import MuEvalWire
internal import OrderedCollections
internal import WireProtocol

/// Turns IMUT module events into muEval events (docs/IMPORT.md has the table), rebuilding absolute
/// values from deltas as each module wrote them. A value type that remembers the last absolute value
/// per module: feed it the log's events in order.
///
/// IMUT's modules (fza/IMUTLib) log a module's first value as `abs` and later ones, when they changed by
/// more than a threshold, as `delta` against the last value logged, each with its own sign: backlight
/// and battery level as new − old, heading as old − new; a location delta carries the new coordinates
/// themselves plus the `distance` moved. Battery state and orientation are `status`, recorders `other`.
struct IMUTEventMapping {
    struct Failure: Error {
        var reason: String
    }

    /// An event ready to store: its class and fields besides `class` and `timestamp`.
    struct Mapped {
        var eventClass: EventClass
        var fields: OrderedDictionary<String, PlistValue>
    }

    private var brightness: Double?
    private var batteryLevel: Double?
    private var heading: Double?

    mutating func map(event name: String, type: String, params: OrderedDictionary<String, PlistValue>, mark: String?) throws(Failure) -> Mapped {
        let isDelta = type == "delta"
        var mapped: Mapped
        switch name {
        case "uiViewControllerChange":
            guard let view = params["class"]?.string ?? params["class-short"]?.string else {
                throw Failure(reason: "uiViewControllerChange has neither \"class\" nor \"class-short\"")
            }
            mapped = Mapped(eventClass: .userInterface, fields: ["type": .string("viewDidAppear"), "view": .string(view)])
        case "backlightChange":
            brightness = try absolute(try number("val", in: params, of: name), delta: isDelta, last: brightness, of: name) { $0 + $1 }
            mapped = sensor("backlight", ["brightness": .real(brightness!)])
        case "batteryLevelChange":
            batteryLevel = try absolute(try number("level", in: params, of: name), delta: isDelta, last: batteryLevel, of: name) { $0 + $1 }
            mapped = sensor("battery", ["level": .real(batteryLevel!)])
        case "batteryStateChange":
            mapped = sensor("battery", ["state": .string(try string("state", in: params, of: name))])
        case "headingChange":
            heading = try absolute(try number("heading", in: params, of: name), delta: isDelta, last: heading, of: name) { last, delta in
                let value = (last - delta).truncatingRemainder(dividingBy: 360)
                return value < 0 ? value + 360 : value
            }
            mapped = sensor("heading", ["magneticHeading": .real(heading!)])
        case "locationChange":
            var fields: OrderedDictionary<String, PlistValue> = [
                "latitude": .real(try number("lat", in: params, of: name)), "longitude": .real(try number("lon", in: params, of: name)),
            ]
            if params["distance"] != nil { fields["distance"] = .real(try number("distance", in: params, of: name)) }
            mapped = sensor("location", fields)
        case "deviceOrientationChange":
            mapped = sensor("orientation", ["orientation": .string(try string("orientation", in: params, of: name))])
        case "frontCameraRecorderStart", "frontCameraRecorderStop", "screenRecorderStart", "screenRecorderStop":
            let recorder = name.hasPrefix("screen") ? "screen" : "frontCamera"
            var fields: OrderedDictionary<String, PlistValue> = [
                "type": .string(name.hasSuffix("Start") ? "recorderStart" : "recorderStop"), "recorder": .string(recorder),
            ]
            if params["file"] != nil { fields["file"] = .string(try string("file", in: params, of: name)) }
            if params["duration"] != nil { fields["duration"] = .real(try number("duration", in: params, of: name)) }
            mapped = Mapped(eventClass: .application, fields: fields)
        default:
            // A module muEval does not know: kept whole, as the app's own event.
            var fields: OrderedDictionary<String, PlistValue> = ["name": .string(name)]
            fields.merge(params) { kept, _ in kept }
            mapped = Mapped(eventClass: .custom, fields: fields)
        }
        var source: OrderedDictionary<String, PlistValue> = ["event": .string(name), "type": .string(type)]
        if let mark { source["mark"] = .string(mark) }
        mapped.fields["imut"] = .dict(source)
        return mapped
    }

    private func sensor(_ name: String, _ values: OrderedDictionary<String, PlistValue>) -> Mapped {
        var fields: OrderedDictionary<String, PlistValue> = ["sensor": .string(name)]
        fields.merge(values) { kept, _ in kept }
        return Mapped(eventClass: .deviceSensor, fields: fields)
    }

    /// The absolute value: `value` itself, or for a delta `apply(last, value)`, rounded to the 1/100
    /// IMUT rounds its values to (so that sums of deltas do not drift into 0.30000000000000004).
    private func absolute(_ value: Double, delta: Bool, last: Double?, of name: String,
                          _ apply: (Double, Double) -> Double) throws(Failure) -> Double {
        guard delta else { return value }
        guard let last else { throw Failure(reason: "a delta of \(name) before any absolute value to apply it to") }
        return (apply(last, value) * 100).rounded() / 100
    }

    private func number(_ key: String, in params: OrderedDictionary<String, PlistValue>, of name: String) throws(Failure) -> Double {
        guard let value = params[key] else { throw Failure(reason: "\(name) has no \"\(key)\"") }
        guard let number = value.number else {
            throw Failure(reason: "\(name)'s \"\(key)\" must be a number, found \(value.kindDescription)")
        }
        return number
    }

    private func string(_ key: String, in params: OrderedDictionary<String, PlistValue>, of name: String) throws(Failure) -> String {
        guard let value = params[key] else { throw Failure(reason: "\(name) has no \"\(key)\"") }
        guard let text = value.string else {
            throw Failure(reason: "\(name)'s \"\(key)\" must be a string, found \(value.kindDescription)")
        }
        return text
    }
}
