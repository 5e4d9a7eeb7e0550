public import SessionAnalysis
public import SessionModel

// Contract stub of the study report (the study-report branch replaces this file).

public struct StudyReportLinks: Sendable {
    public var console: String?
    public var sessionReports: [Int64: String]
    public init(console: String? = nil, sessionReports: [Int64: String] = [:]) {
        self.console = console
        self.sessionReports = sessionReports
    }
}

public enum StudyReportGenerator {
    public static func generate(_ data: StudyData, iteration: Int?, output: String, options: AnalysisOptions,
                                links: StudyReportLinks, sessionReports: Bool) async throws -> String {
        fatalError("not yet implemented")
    }
}
