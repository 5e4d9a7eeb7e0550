internal import MuEvalWire
internal import WireProtocol

/// Checks the UI state trees of every view against the quantifiable rules of Apple's iOS Human Interface
/// Guidelines (thesis 2.4.2, 5.3 `UIGuidelineChecker`): hit targets of at least 44 × 44 points, a
/// placeholder in every text field, and text of at least 11 points (an element's `fontSize`, when the
/// capture library reports it). Each element is reported once, however often its view appeared.
public struct UIGuidelineChecker: Interpreter {
    public let name = "UI guidelines"
    public let requires: [any InterpretationResult.Type] = [Interactions.self, Screenshots.self]
    public let produces: [any InterpretationResult.Type] = [ProblemReport.self]
    let options: AnalysisOptions

    /// Classes a finger aims at. Table cells and scroll views are large by nature; labels are not targets.
    static let hitTargetClasses: Set<String> = [
        "UIButton", "UINavigationButton", "UIBarButtonItem", "UISegmentedControl", "UISwitch", "UISlider",
        "UITextField", "UIPageControl", "UIStepper", "UITabBarButton", "UIToolbarButton", "UISearchBar",
    ]
    static let placeholderClasses: Set<String> = ["UITextField", "UISearchBar"]

    public init(options: AnalysisOptions) {
        self.options = options
    }

    /// A rule an element breaks, with what the evidence needs.
    private enum Violation {
        case smallHitTarget, missingPlaceholder
        case smallText(points: Double)

        var kind: UsabilityProblem.Kind {
            switch self {
            case .smallHitTarget: .smallHitTarget
            case .missingPlaceholder: .missingPlaceholder
            case .smallText: .smallText
            }
        }
    }

    private struct Finding: Hashable {
        var kind: UsabilityProblem.Kind
        var view: String
        var element: ElementReference
    }

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let screenshots = try results.required(Screenshots.self)
        var problems: [UsabilityProblem] = []
        var seen: Set<Finding> = []
        for appearance in try results.required(Interactions.self).appearances {
            guard let tree = appearance.uiState else { continue }
            visit(tree) { violation, element in
                guard seen.insert(Finding(kind: violation.kind, view: appearance.view, element: element)).inserted else { return }
                problems.append(problem(violation, element, in: appearance, screenshot: screenshots.shown(at: appearance.time)))
            }
        }
        results.add(ProblemReport(detector: name, problems: problems))
    }

    /// Depth-first through `subviews`, calling `violation` for every rule an element breaks.
    private func visit(_ node: PlistValue, _ violation: (Violation, ElementReference) -> Void) {
        if let className = node["className"]?.string, let frame = node["frame"]?.rect {
            let element = ElementReference(className: className, id: nil,
                                           title: node["title"]?.string ?? node["placeholder"]?.string, frame: frame)
            let visible = frame.width > 0 && frame.height > 0
            if visible, Self.hitTargetClasses.contains(className),
               frame.width < options.minimumHitTarget || frame.height < options.minimumHitTarget {
                violation(.smallHitTarget, element)
            }
            if Self.placeholderClasses.contains(className), (node["placeholder"]?.string ?? "").isEmpty {
                violation(.missingPlaceholder, element)
            }
            // Only text that is shown: a font size on an element with no text reads nothing.
            if visible, let text = Self.shownText(node), let size = node["fontSize"]?.number.flatMap(Plausible.length),
               size > 0, size < options.minimumFontSize {
                var named = element
                named.title = named.title ?? text
                violation(.smallText(points: size), named)
            }
        }
        for child in node["subviews"]?.array ?? [] { visit(child, violation) }
    }

    /// The text an element shows: its title, its text, else its placeholder; nil for none.
    private static func shownText(_ node: PlistValue) -> String? {
        ["title", "text", "placeholder"].lazy.compactMap { node[$0]?.string }.first { !$0.isEmpty }
    }

    private func problem(_ violation: Violation, _ element: ElementReference, in appearance: ViewAppearance,
                         screenshot: Int?) -> UsabilityProblem {
        let kind = violation.kind
        let frame = element.frame!
        let size = "\(Int(saturating: frame.width)) × \(Int(saturating: frame.height)) points"
        let minimum = Int(saturating: options.minimumHitTarget)
        let evidence: String, recommendation: String
        switch violation {
        case .smallText(let points):
            let smallest = formatTenths(options.minimumFontSize)
            evidence = "\(element.label) is set in \(formatTenths(points)) pt, under the \(smallest) pt the iOS Human Interface Guidelines give as the smallest readable size."
            recommendation = "Set the text of \(element.label) in at least \(smallest) pt, best in a Dynamic Type text style so that it follows the reader's text size setting."
        case .smallHitTarget:
            evidence = "\(element.label) is \(size), under the \(minimum) × \(minimum) points of the iOS Human Interface Guidelines."
            recommendation = "Enlarge the hit target of \(element.label) to at least \(minimum) × \(minimum) points (the visible control may stay smaller), and keep neighbouring targets apart."
        case .missingPlaceholder:
            evidence = "The \(element.className) at x \(Int(saturating: frame.x)), y \(Int(saturating: frame.y)) (\(size)) has no placeholder text."
            recommendation = "Show a hint of the field's purpose as its placeholder, such as \"Name\" or \"Address\"."
        }
        return UsabilityProblem(kind: kind, view: appearance.view, time: appearance.time, occurrences: 1, screenshot: screenshot, frame: frame,
                                evidence: evidence, recommendation: recommendation, element: element.label)
    }

}
