public import SessionAnalysis
public import SessionModel

/// Analyses a study's sessions and computes its numbers (docs/STUDIES.md). Contract stub: the
/// study-analysis branch implements it.
public enum StudyAnalyzer {
    /// Analyses the sessions of `data` (only those of `iteration` when given), at most `parallelism`
    /// at a time, each session's analysis reduced to what the results need before the next starts.
    public static func analyze(_ data: StudyData, iteration: Int? = nil, options: AnalysisOptions = AnalysisOptions(),
                               parallelism: Int = 2) async throws -> StudyResults {
        fatalError("not yet implemented")
    }
}

/// `muevalctl study export NAME --format csv`: one row per participant × task × iteration.
public enum StudyExport {
    /// The header, in order (docs/STUDIES.md documents each column).
    public static let columns: [String] = []

    public static func csv(_ results: StudyResults) -> String {
        fatalError("not yet implemented")
    }
}
