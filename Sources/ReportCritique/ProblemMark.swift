/// A usability problem the default report found, at its time: a mark on the replay's scrubber. With the
/// report's other outputs, so that the replay index (and its fuzz target) need not link the report service.
package struct ProblemMark: Codable, Sendable, Equatable {
    package var t: Double
    package var title: String

    package init(t: Double, title: String) {
        self.t = t
        self.title = title
    }
}
