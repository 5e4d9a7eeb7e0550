public import SessionModel
internal import WireProtocol

/// A usability problem found in the session: where it happened, the evidence, and what to change.
public struct UsabilityProblem: Equatable, Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        case smallHitTarget = "small hit target"
        case missingPlaceholder = "text field without placeholder"
        case unresponsiveTap = "unresponsive tap"
        case rageTap = "rage taps"
        case freeze = "freeze"
        case navigationLoop = "navigation loop"
        /// The tester said an exclamation of the configured list while thinking aloud.
        case exclamation = "exclamation"
        /// Text in the UI state tree set in a font smaller than the minimum.
        case smallText = "small text"
        /// The tester shook the phone: a possible sign of frustration.
        case shake = "shake"
        /// A view whose frames hitch, or the launch or a transition that takes too long, rated critical.
        case poorFluidity = "poor fluidity"
    }

    public var kind: Kind
    public var view: String?
    /// When it (first) happened.
    public var time: Double
    public var occurrences: Int
    /// The screenshot that shows it.
    public var screenshot: Int?
    /// What to mark on the screenshot: an element's frame, or where the finger went.
    public var frame: Rect?
    public var point: Point?
    public var evidence: String
    public var recommendation: String
    /// The element it is about (`ElementReference.label`), when the detector names one: what groups
    /// the same problem across a study's sessions.
    public var element: String? = nil
}

/// The problems one detector found. Every detector adds one; the report lists them all, so a new
/// detector needs no change anywhere else.
public struct ProblemReport: InterpretationResult, Equatable {
    public var detector: String
    public var problems: [UsabilityProblem]
}

func formatSeconds(_ seconds: Double) -> String {
    "\(formatTenths(seconds)) s"
}

/// A number to a tenth, without ".0" when whole: "2", "9.5".
func formatTenths(_ value: Double) -> String {
    let tenths = (value * 10).rounded() / 10
    if tenths == tenths.rounded(), let whole = Int(checked: tenths) { return "\(whole)" }
    return "\(tenths)"
}
