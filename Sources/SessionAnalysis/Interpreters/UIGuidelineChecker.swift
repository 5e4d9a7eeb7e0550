internal import MuEvalWire
internal import WireProtocol

/// Checks the UI state trees of every view against the quantifiable rules of Apple's iOS Human Interface
/// Guidelines (thesis 2.4.2, 5.3 `UIGuidelineChecker`): hit targets of at least 44 × 44 points, and a
/// placeholder in every text field. Each element is reported once, however often its view appeared.
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
            visit(tree) { kind, element in
                guard seen.insert(Finding(kind: kind, view: appearance.view, element: element)).inserted else { return }
                problems.append(problem(kind, element, in: appearance, screenshot: screenshots.shown(at: appearance.time)))
            }
        }
        results.add(ProblemReport(detector: name, problems: problems))
    }

    /// Depth-first through `subviews`, calling `violation` for every rule an element breaks.
    private func visit(_ node: PlistValue, _ violation: (UsabilityProblem.Kind, ElementReference) -> Void) {
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
        }
        for child in node["subviews"]?.array ?? [] { visit(child, violation) }
    }

    private func problem(_ kind: UsabilityProblem.Kind, _ element: ElementReference, in appearance: ViewAppearance,
                         screenshot: Int?) -> UsabilityProblem {
        let frame = element.frame!
        let size = "\(Int(saturating: frame.width)) × \(Int(saturating: frame.height)) points"
        let minimum = Int(saturating: options.minimumHitTarget)
        switch kind {
        case .smallHitTarget:
            return UsabilityProblem(
                kind: kind, view: appearance.view, time: appearance.time, occurrences: 1, screenshot: screenshot, frame: frame,
                evidence: "\(element.label) is \(size), under the \(minimum) × \(minimum) points of the iOS Human Interface Guidelines.",
                recommendation: "Enlarge the hit target of \(element.label) to at least \(minimum) × \(minimum) points (the visible control may stay smaller), and keep neighbouring targets apart.",
                element: element.label)
        default:
            return UsabilityProblem(
                kind: kind, view: appearance.view, time: appearance.time, occurrences: 1, screenshot: screenshot, frame: frame,
                evidence: "The \(element.className) at x \(Int(saturating: frame.x)), y \(Int(saturating: frame.y)) (\(size)) has no placeholder text.",
                recommendation: "Show a hint of the field's purpose as its placeholder, such as \"Name\" or \"Address\".",
                element: element.label)
        }
    }
}
