/// Good, warning or critical: Apple's three ratings of hitches (docs/REPORTS.md, "Fluidity").
public enum FluidityRating: String, Sendable, Comparable, CaseIterable {
    case good, warning, critical

    public static func < (a: Self, b: Self) -> Bool { allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)! }

    static func of(_ value: Double, warning: Double, critical: Double) -> Self {
        value > critical ? .critical : value >= warning ? .warning : .good
    }
}

/// How smoothly one view rendered, and how long it took to get there, from the frame-timing readings.
public struct ViewFluidity: Equatable, Sendable {
    public var view: String
    /// Seconds of rendering the readings cover (a view that shows nothing new renders no frames).
    public var rendering = 0.0
    public var frames = 0
    public var dropped = 0
    public var hitchTime = 0.0
    public var longestFrame = 0.0
    /// When its worst second of frames (most hitch time) ended, for the screenshot.
    public var worstTime: Double?
    private var worstHitch = -1.0
    /// Durations of the transitions into it, in time order.
    public var transitions: [Double] = []
    public var slowestTransitionTime: Double?

    public init(view: String) {
        self.view = view
    }

    /// Milliseconds of hitches per second of rendering: Apple's hitch-time ratio.
    public var hitchRatio: Double { rendering > 0 ? hitchTime * 1000 / rendering : 0 }
    /// Share of the display's refreshes that showed no new frame.
    public var droppedShare: Double { frames + dropped > 0 ? Double(dropped) / Double(frames + dropped) : 0 }
    public var slowestTransition: Double? { transitions.max() }

    mutating func add(_ reading: FrameTimingReading) {
        switch reading.kind {
        case .frames:
            rendering += reading.duration
            frames += reading.frames
            dropped += reading.dropped
            hitchTime += reading.hitchTime
            longestFrame = max(longestFrame, reading.longestFrame)
            if reading.hitchTime > worstHitch { (worstHitch, worstTime) = (reading.hitchTime, reading.time) }
        case .transition:
            if reading.duration > slowestTransition ?? -1 { slowestTransitionTime = reading.time }
            transitions.append(reading.duration)
        case .launch:
            break
        }
    }
}

/// Per view, the frame figures and ratings; the launches with theirs.
public struct Fluidity: InterpretationResult, Equatable {
    public struct Rated: Equatable, Sendable {
        public var figures: ViewFluidity
        /// From the hitch-time ratio; nil when the view rendered no frames.
        public var hitches: FluidityRating?
        /// From the slowest transition into it; nil without one.
        public var transitions: FluidityRating?
        /// The worse of the two.
        public var rating: FluidityRating? { [hitches, transitions].compactMap { $0 }.max() }
    }

    /// Launch to the first frame.
    public struct Launch: Equatable, Sendable {
        public var time: Double
        public var duration: Double
    }

    /// In the order the views first had a reading.
    public var views: [Rated]
    public var launches: [Launch]
    /// From the slowest launch.
    public var launchRating: FluidityRating?
}

/// Rates each view's fluidity from the frame-timing sensor (docs/REPORTS.md, "Fluidity"); a view or launch
/// rated critical is a usability problem.
public struct FluidityInterpreter: Interpreter {
    public let name = "Fluidity"
    public let requires: [any InterpretationResult.Type] = [SensorReadings.self, Screenshots.self]
    public let produces: [any InterpretationResult.Type] = [Fluidity.self, ProblemReport.self]
    let options: AnalysisOptions

    public init(options: AnalysisOptions) {
        self.options = options
    }

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let fluidity = rate(try results.required(SensorReadings.self).frameTiming)
        let screenshots = try results.required(Screenshots.self)
        results.add(fluidity)
        var problems: [UsabilityProblem] = []
        for rated in fluidity.views where rated.rating == .critical {
            let view = rated.figures
            let time = (rated.hitches == .critical ? view.worstTime : view.slowestTransitionTime) ?? view.worstTime ?? 0
            problems.append(UsabilityProblem(
                kind: .poorFluidity, view: view.view, time: time, occurrences: 1, screenshot: screenshots.shown(at: time),
                evidence: evidence(rated),
                recommendation: "Profile \(view.view) with Instruments (Animation Hitches, Time Profiler): keep layout, image decoding and data work off the main thread while it scrolls or animates, and prepare what the next view needs before the transition."))
        }
        if fluidity.launchRating == .critical, let slowest = fluidity.launches.max(by: { $0.duration < $1.duration }) {
            problems.append(UsabilityProblem(
                kind: .poorFluidity, view: nil, time: slowest.time, occurrences: fluidity.launches.count { $0.duration > options.launchCritical },
                screenshot: screenshots.shown(at: slowest.time),
                evidence: "The app took \(Self.milliseconds(slowest.duration)) from launch to its first frame (critical above \(Self.milliseconds(options.launchCritical))).",
                recommendation: "Defer work from launch until after the first screen shows: load data lazily and in the background, and link fewer frameworks.",
                element: "launch"))
        }
        results.add(ProblemReport(detector: name, problems: problems))
    }

    public func rate(_ readings: [FrameTimingReading]) -> Fluidity {
        var views: [ViewFluidity] = []
        var index: [String: Int] = [:]
        var launches: [Fluidity.Launch] = []
        for reading in readings {
            if reading.kind == .launch {
                launches.append(Fluidity.Launch(time: reading.time, duration: reading.duration))
                continue
            }
            guard let view = reading.view else { continue }
            if index[view] == nil {
                index[view] = views.count
                views.append(ViewFluidity(view: view))
            }
            views[index[view]!].add(reading)
        }
        let rated = views.map { view in
            Fluidity.Rated(
                figures: view,
                hitches: view.rendering > 0 ? .of(view.hitchRatio, warning: options.hitchRatioWarning, critical: options.hitchRatioCritical) : nil,
                transitions: view.slowestTransition.map { .of($0, warning: options.transitionWarning, critical: options.transitionCritical) })
        }
        let launchRating = launches.map(\.duration).max().map { FluidityRating.of($0, warning: options.launchWarning, critical: options.launchCritical) }
        return Fluidity(views: rated, launches: launches, launchRating: launchRating)
    }

    private func evidence(_ rated: Fluidity.Rated) -> String {
        let view = rated.figures
        var parts: [String] = []
        if rated.hitches != nil {
            parts.append("\(formatTenths(view.hitchRatio)) ms of hitches per second of rendering (\(rated.hitches!.rawValue); critical above \(formatTenths(options.hitchRatioCritical)))")
            parts.append("\(view.dropped) of \(view.frames + view.dropped) refreshes dropped, the longest frame \(Self.milliseconds(view.longestFrame))")
        }
        if let slowest = view.slowestTransition, let rating = rated.transitions {
            parts.append("the slowest transition to it took \(Self.milliseconds(slowest)) (\(rating.rawValue); critical above \(Self.milliseconds(options.transitionCritical)))")
        }
        return "\(view.view): " + parts.joined(separator: "; ") + "."
    }

    /// 0.0834 as "83 ms".
    static func milliseconds(_ seconds: Double) -> String { "\(Int(saturating: (seconds * 1000).rounded())) ms" }
}
