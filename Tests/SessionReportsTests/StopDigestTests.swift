import Foundation
import JournalStorage
import Logging
import SessionAnalysis
import SessionAnalysisTestSupport
import SessionModel
import SessionReports
import StudyAnalysis
import Testing

/// The default report's analysis gives a study session its digest (docs/STUDIES.md, "Digests"): the study report
/// then reads it instead of analysing the session again.
@Suite struct StopDigestTests {
    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-digests-\(UUID().uuidString.prefix(8))").path
    private let start = 1_300_000_000.0

    private func session(_ id: Int64, study: Study?) async throws -> SessionRecord {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let context = study.map { StudyContext(study: $0, iteration: $0.iterations[0], participant: $0.participants[0]) }
        let builder = try JournalBuilder(path: directory + "/session-\(id).sqlite", studyContext: context)
        builder.viewDidAppear(at: start, view: "FeedView", transition: "launch", stack: ["FeedView"], screenshot: Array("PNG".utf8))
        builder.marker(at: start + 1, "begin", task: "Publish")
        builder.tap(at: start + 2, x: 10, y: 20, view: "FeedView")
        builder.marker(at: start + 3, "end", task: "Publish")
        try await builder.finish()
        return SessionRecord(id: id, uuid: "u\(id)", name: "s\(id)", state: .stopped, created: 0, path: builder.path,
                             assignment: context?.assignment)
    }

    private func digest(_ record: SessionRecord) throws -> StoredAnalysisDigest? {
        try SessionReader(path: record.path).analysisDigest(kind: StudyDigestMaker.kind)
    }

    @Test func theDefaultReportOfAStudySessionStoresItsDigestAndTheStudyReadsIt() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let study = Study(name: "s", created: 0, iterations: [StudyIteration(number: 1, created: 0)],
                          tasks: [StudyTask(name: "Publish", success: .view("FeedView"))], participants: [Participant(code: "P1", created: 0)])
        let inStudy = try await session(1, study: study)
        let alone = try await session(2, study: nil)
        let reports = SessionReports(dataDirectory: directory, logger: Logger(label: "test"))
        for record in [inStudy, alone] {
            let state = await reports.write(record).value
            guard state.state == .ready else { Issue.record("no report of \(record.id): \(state)"); return }
        }
        let stored = try #require(try digest(inStudy))
        #expect(stored.analysis == AnalysisVersion.current)
        #expect(try digest(alone) == nil, "a session outside any study has no digest to make")

        // Another report of the session (a saved configuration's) leaves the digest alone.
        let other = await reports.write(inStudy, name: "other").value
        guard other.state == .ready else { Issue.record("no second report: \(other)"); return }
        #expect(try digest(inStudy)?.made == stored.made)

        // The study reads it, and stores nothing new: it was current.
        let results = try await StudyAnalyzer.analyze(StudyData(study: study, sessions: [inStudy], responses: StudyResponses()),
                                                      digests: .readWrite)
        #expect(results.attempts.map(\.reason) == ["view FeedView did not appear"], "it appeared before the task began")
        #expect(try digest(inStudy)?.made == stored.made)
    }
}
