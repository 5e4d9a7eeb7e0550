/// One part of the report (thesis 4.2.3: each `Section` subclass both holds and renders its content).
/// Its kind and title are registered with `SectionKind`, so a section's type holds only its rendering.
protocol SectionWriter {
    /// Writes the section's HTML, inside its `<section>`, into the page as it is written.
    func write(_ context: ReportContext, to output: ReportOutput) throws
}

/// A section whose HTML is small (every one but the timeline, which streams its rows): rendered as one string.
protocol ReportSection: SectionWriter {
    /// The section's HTML, inside its `<section>`; read from the analysis results of every session.
    func body(_ context: ReportContext) -> String
}

extension ReportSection {
    func write(_ context: ReportContext, to output: ReportOutput) throws {
        try output.append(body(context))
    }
}

extension SectionKind {
    /// The section that renders this kind: the one place where a section is registered.
    var section: any SectionWriter {
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
