/// The event classes of a page recording (capture.js's `dom: true`; docs/WEB-CAPTURE.md, "Page recording"): each event
/// carries one record, as JSON, in its field `dom`.
public enum PageRecordClass: String, CaseIterable, Sendable {
    case snapshot = "DOMSnapshot"
    case mutations = "DOMMutations"
    case scroll = "DOMScroll"
    case viewport = "DOMViewport"
    case focus = "DOMFocus"

    /// The class names, for queries.
    public static let names = allCases.map(\.rawValue)
}
