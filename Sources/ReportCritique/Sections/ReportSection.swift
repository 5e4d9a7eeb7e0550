/// One part of the report (thesis 4.2.3: each `Section` subclass both holds and renders its content).
protocol ReportSection {
    var kind: SectionKind { get }
    var title: String { get }
    /// The section's HTML, inside its `<section>`; read from the analysis results of every session.
    func body(_ context: ReportContext) -> String
}

extension SectionKind {
    /// The section that renders this kind: the one place where a section is registered.
    var section: any ReportSection {
        switch self {
        case .overview: OverviewSection()
        case .timeline: TimelineSection()
        case .heatmaps: HeatmapSection()
        case .navigation: NavigationSection()
        case .durations: DurationsSection()
        case .gestures: GesturesSection()
        case .problems: ProblemsSection()
        case .notes: NotesSection()
        case .tasks: TasksSection()
        }
    }
}
