internal import Foundation
public import SessionAnalysis

/// Writes the report directory: index.html, report.css, report.js and each distinct screenshot once,
/// named by its SHA-256 (so several sessions showing the same screen share the file). Nothing refers to the
/// network: the directory opens from file:// and can be zipped and sent.
public struct ReportWriter {
    public let configuration: ReportConfiguration

    public init(configuration: ReportConfiguration) {
        self.configuration = configuration
    }

    /// Writes the report of `sessions` (several: compared side by side) into `directory`; returns index.html's path.
    @discardableResult
    public func write(_ sessions: [AnalyzedSession], to directory: String) throws -> String {
        let shots = directory + "/shots"
        do {
            try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        } catch {
            throw ReportError.cannotWrite(path: directory, reason: error.localizedDescription)
        }
        var written: Set<String> = []
        let reported = try sessions.map { analysis in
            ReportedSession(analysis: analysis, label: analysis.journal.session.testUser ?? analysis.journal.session.name,
                            shotFiles: try writeScreenshots(of: analysis, into: shots, written: &written),
                            start: analysis.results.first(Overview.self)?.start ?? 0)
        }
        let context = ReportContext(sessions: reported, options: configuration.options)
        try write(ReportAssets.css, to: directory + "/report.css")
        try write(ReportAssets.javascript, to: directory + "/report.js")
        let index = directory + "/index.html"
        try write(page(context), to: index)
        return index
    }

    private func writeScreenshots(of analysis: AnalyzedSession, into directory: String, written: inout Set<String>) throws -> [String] {
        try (analysis.results.first(Screenshots.self)?.shots ?? []).map { shot in
            let sha = shot.blob.sha256
            guard !written.contains(sha) else { return "shots/\(sha).png" }
            guard let bytes = try analysis.journal.blob(sha256: sha) else {
                throw ReportError.missingScreenshot(sha256: sha, session: analysis.journal.session.name)
            }
            let path = directory + "/\(sha).png"
            try writeFile(path, bytes)
            written.insert(sha)
            return "shots/\(sha).png"
        }
    }

    private func write(_ text: String, to path: String) throws {
        try writeFile(path, Array(text.utf8))
    }

    /// A plain write, without the temporary file and fsync of Foundation's writes: they cost a second per
    /// thousand screenshots, and a half-written report is simply written again.
    private func writeFile(_ path: String, _ bytes: [UInt8]) throws {
        guard let file = fopen(path, "wb") else {
            throw ReportError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        guard fclose(file) == 0, written == bytes.count else {
            throw ReportError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
    }

    private func page(_ context: ReportContext) -> String {
        let sections = configuration.sections.map(\.section)
        let title = "Usability report: " + context.sessions.map(\.label).joined(separator: ", ")
        let navigation = sections.map { "<a href=\"#\($0.kind.rawValue)\">\($0.title)</a>" }.joined()
        let body = sections.map { section in
            "<section id=\"\(section.kind.rawValue)\" class=\"section\"><h2>\(section.title)</h2>\(section.body(context))</section>"
        }.joined(separator: "\n")
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(esc(title))</title><link rel="icon" href="data:,"><link rel="stylesheet" href="report.css"></head>
            <body data-errors="0"><header><h1>\(esc(title))</h1><p class="generated">muEval report of \(context.sessions.count == 1 ? "one session" : "\(context.sessions.count) sessions, side by side") · generated \(Format.date(Date().timeIntervalSince1970))</p>
            <nav>\(navigation)</nav></header>
            <main>
            \(body)
            </main>
            <script src="report.js"></script>
            </body></html>
            """
    }
}

/// Analyses session files and writes their report: the facade of analysis and critique (thesis 4.2.3, `ReportGeneratorFacade`).
public enum ReportGenerator {
    /// Returns the path of the report's index.html.
    public static func generate(sessionFiles: [String], configuration: ReportConfiguration, output: String) throws -> String {
        let analyses = try sessionFiles.map { try AnalyzedSession(path: $0, options: configuration.options) }
        return try ReportWriter(configuration: configuration).write(analyses, to: output)
    }
}
