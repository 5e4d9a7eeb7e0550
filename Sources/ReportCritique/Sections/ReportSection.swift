/// One part of the report (thesis 4.2.3: each `Section` subclass both holds and renders its content).
/// Its kind and title are registered with `SectionKind`, so a section's type holds only its rendering.
protocol ReportSection {
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
        case .fluidity: FluiditySection()
        case .face: FaceSection()
        }
    }

    /// The section's heading.
    var title: String {
        switch self {
        case .overview: "Overview"
        case .timeline: "Timeline"
        case .heatmaps: "Touch heatmaps"
        case .navigation: "Navigation path"
        case .durations: "View durations"
        case .gestures: "Gestures and buttons"
        case .problems: "Usability problems"
        case .notes: "Observer notes"
        case .tasks: "Tasks"
        case .fluidity: "Performance and fluidity"
        case .face: "Face"
        }
    }
}
