public import FaceAnalysis
internal import Foundation
public import SessionAnalysis

/// Writes the report directory: index.html, report.css, report.js and each distinct screenshot once,
/// named by its SHA-256 (so several sessions showing the same screen share the file). Nothing refers to the
/// network: the directory opens from file:// and can be zipped and sent.
public struct ReportWriter {
    public let configuration: ReportConfiguration
    /// How the face video is scanned (the face section).
    public var faceScanner = FaceScanner()

    public init(configuration: ReportConfiguration) {
        self.configuration = configuration
    }

    /// Writes the report of `sessions` (several: compared side by side) into `directory`; returns index.html's path.
    @discardableResult
    public func write(_ sessions: [AnalyzedSession], to directory: String) throws -> String {
        let (index, screenshots) = try writePage(sessions, to: directory)
        try screenshots.finish()
        return index
    }

    /// Like `write`, but returns once the page is written, while its screenshots may still be being copied into
    /// `shots/` (`screenshots` says when they are): muevald offers the page at once, and the console serves the
    /// screenshots from the session file until they are there (docs/REPORTS.md, "When a report is ready").
    /// When the page fails, the copy has ended too (the caller may remove the directory).
    public func writePage(_ sessions: [AnalyzedSession], to directory: String) throws -> (index: String, screenshots: ScreenshotCopy) {
        let shots = try ReportDirectory.create(directory)
        // Each distinct image once, shared by the sessions that show it.
        let copy = ScreenshotCopy(sessions.flatMap { analysis in
            (analysis.results.first(Screenshots.self)?.shots ?? []).map { shot in
                ScreenshotCopy.Shot(sessionFile: analysis.journal.path, sessionName: analysis.journal.session.name, sha256: shot.blob.sha256)
            }
        }, into: shots)
        let index = directory + "/index.html"
        try copy.ahead {
            let reported = try sessions.enumerated().map { index, analysis in
                var session = ReportedSession(analysis: analysis, label: analysis.journal.session.testUser ?? analysis.journal.session.name,
                                              shotFiles: (analysis.results.first(Screenshots.self)?.shots ?? []).map { ScreenshotCopy.file($0.blob.sha256) },
                                              start: analysis.results.first(Overview.self)?.start ?? 0)
                session.audio = try writeAudio(of: analysis, number: index, into: directory, start: session.start)
                if configuration.sections.contains(.face) { session.face = try scanFace(of: analysis, start: session.start) }
                if configuration.sections.contains(.heatmaps) || configuration.sections.contains(.problems) {
                    session.pages = try ReportPages.pages(of: analysis)
                }
                return session
            }
            let context = ReportContext(sessions: reported, options: configuration.options)
            let output = try ReportOutput(path: index)
            try writePage(context, to: output)
            try output.close()
        }
        return (index, copy)
    }

    /// The session's first audio stream, copied into `media/` so that the report plays it offline.
    private func writeAudio(of analysis: AnalyzedSession, number: Int, into directory: String, start: Double) throws
        -> (file: String, offset: Double)?
    {
        guard let stream = analysis.results.first(Speech.self)?.streams.first(where: { $0.kind == "audio" }) else { return nil }
        let extensionName = stream.contentType == "audio/wav" ? "wav" : "m4a"
        try FileManager.default.createDirectory(atPath: directory + "/media", withIntermediateDirectories: true)
        let file = "media/session-\(number + 1).\(extensionName)"
        try analysis.journal.writeMedia(stream, to: directory + "/" + file)
        return (file, start - stream.start)
    }

    /// The session's first video stream, copied to a private temporary file for the face scan and removed after it:
    /// the face is not copied into the report, which is made to be passed around.
    private func scanFace(of analysis: AnalyzedSession, start: Double) throws
        -> (outcome: FaceScanner.Outcome, offset: Double, interval: Double, strongEmotion: Double)?
    {
        guard let stream = analysis.results.first(Speech.self)?.streams.first(where: { $0.kind == "video" }) else { return nil }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-face-\(UUID().uuidString).mp4").path
        guard FileManager.default.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw ReportError.cannotWrite(path: file, reason: "cannot create the face video's temporary copy")
        }
        defer { try? FileManager.default.removeItem(atPath: file) }
        try analysis.journal.writeMedia(stream, to: file)
        return (faceScanner.scan(video: file), stream.start - start, 1 / faceScanner.samplesPerSecond, faceScanner.strongEmotion)
    }

    private func writePage(_ context: ReportContext, to output: ReportOutput) throws {
        let parts = configuration.sections.map { kind in
            ReportDirectory.Part(id: kind.rawValue, title: kind.title) { try kind.section.write(context, to: $0) }
        }
        let count = context.sessions.count
        try ReportDirectory.writePage(title: "Usability report: " + context.sessions.map(\.label).joined(separator: ", "),
                                      subtitle: "muEval report of \(Format.count(count, "session"))\(count == 1 ? "" : ", side by side")",
                                      parts: parts, to: output)
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
