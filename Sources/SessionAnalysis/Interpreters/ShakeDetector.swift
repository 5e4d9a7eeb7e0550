/// The tester shook the phone: acceleration beyond gravity, back and forth, several times in quick succession.
public struct Shake: Equatable, Sendable {
    public var start: Double
    public var end: Double
    /// Changes of direction between the strong samples.
    public var reversals: Int
    /// The strongest acceleration beyond gravity, in g.
    public var peak: Double
    /// The view on screen when it began.
    public var view: String?
}

public struct Shakes: InterpretationResult, Equatable {
    public var shakes: [Shake]
}

/// Shakes in the accelerometer samples (docs/REPORTS.md, "Shakes"), each a possible sign of frustration.
///
/// Gravity is the last calm sample (about 1 g, and no strong sample within `shakeWindow`), so that a phone
/// turned to landscape does not read as moved. A sample is strong when it differs from gravity by at least
/// `shakeThreshold` g; a reversal is a strong sample pointing against the strong sample before it. A run of
/// strong samples, each within `shakeWindow` of the previous, with at least `shakeReversals` reversals is a shake.
public struct ShakeDetector: Interpreter {
    public let name = "Shakes"
    public let requires: [any InterpretationResult.Type] = [SensorReadings.self, Interactions.self, Screenshots.self]
    public let produces: [any InterpretationResult.Type] = [Shakes.self, ProblemReport.self]
    let options: AnalysisOptions

    /// How far from 1 g a sample may be and still show gravity alone.
    static let calmTolerance = 0.15

    public init(options: AnalysisOptions) {
        self.options = options
    }

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let appearances = try results.required(Interactions.self).appearances
        let screenshots = try results.required(Screenshots.self)
        let shakes = detect(try results.required(SensorReadings.self).acceleration).map { shake in
            var shake = shake
            shake.view = appearances.last { $0.time <= shake.start }?.view
            return shake
        }
        results.add(Shakes(shakes: shakes))
        results.add(ProblemReport(detector: name, problems: shakes.map { shake in
            let on = shake.view.map { " while \($0) was on screen" } ?? ""
            return UsabilityProblem(
                kind: .shake, view: shake.view, time: shake.start, occurrences: 1, screenshot: screenshots.shown(at: shake.start),
                evidence: "The phone was shaken\(on): \(shake.reversals) changes of direction in \(formatSeconds(shake.end - shake.start)), up to \(formatTenths(shake.peak)) g beyond gravity.",
                recommendation: "A shake is often frustration (or iOS's shake to undo): replay what the tester tried just before, and make what they expected happen, or say why it did not.")
        }))
    }

    /// The shakes in samples ordered by time; `view` is left for the caller.
    public func detect(_ samples: [AccelerationSample]) -> [Shake] {
        var shakes: [Shake] = []
        var gravity: (x: Double, y: Double, z: Double) = (0, 0, 0)
        var run: (start: Double, last: Double, direction: (x: Double, y: Double, z: Double), reversals: Int, peak: Double)?
        func close() {
            if let done = run, done.reversals >= options.shakeReversals {
                shakes.append(Shake(start: done.start, end: done.last, reversals: done.reversals, peak: done.peak, view: nil))
            }
            run = nil
        }
        for sample in samples {
            if let open = run, sample.time - open.last > options.shakeWindow { close() }
            if run == nil, abs(sample.magnitude - 1) <= Self.calmTolerance {
                gravity = (sample.x, sample.y, sample.z)
                continue
            }
            let delta = (x: sample.x - gravity.x, y: sample.y - gravity.y, z: sample.z - gravity.z)
            let strength = (delta.x * delta.x + delta.y * delta.y + delta.z * delta.z).squareRoot()
            guard strength >= options.shakeThreshold else { continue }
            guard var open = run else {
                run = (sample.time, sample.time, delta, 0, strength)
                continue
            }
            if delta.x * open.direction.x + delta.y * open.direction.y + delta.z * open.direction.z < 0 { open.reversals += 1 }
            open.last = sample.time
            open.direction = delta
            open.peak = max(open.peak, strength)
            run = open
        }
        close()
        return shakes
    }
}
