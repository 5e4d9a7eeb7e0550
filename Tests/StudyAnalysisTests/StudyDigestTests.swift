import Foundation
import JournalStorage
import ReportCritique
import SessionAnalysis
import SessionModel
@testable import StudyAnalysis
import Testing
import WireProtocol

/// Session digests stored in the session files (docs/STUDIES.md, "Digests"): a study report from stored digests
/// is the report from freshly analysed sessions, and a digest that no longer fits its file is made again.
@Suite struct StudyDigestTests {
    typealias F = StudyFixture

    /// Everything the results hold, for comparing two analyses of the same study.
    private func same(_ a: StudyResults, _ b: StudyResults, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(a.study == b.study, sourceLocation: sourceLocation)
        #expect(a.iterations == b.iterations, sourceLocation: sourceLocation)
        #expect(a.sessions == b.sessions, sourceLocation: sourceLocation)
        #expect(a.attempts == b.attempts, sourceLocation: sourceLocation)
        #expect(a.taskMetrics == b.taskMetrics, sourceLocation: sourceLocation)
        #expect(a.comparisons == b.comparisons, sourceLocation: sourceLocation)
        #expect(a.problems == b.problems, sourceLocation: sourceLocation)
        #expect(a.heatmaps == b.heatmaps, sourceLocation: sourceLocation)
        #expect(a.notes == b.notes, sourceLocation: sourceLocation)
        #expect(a.responses == b.responses, sourceLocation: sourceLocation)
    }

    private func stored(_ record: SessionRecord) throws -> StoredAnalysisDigest? {
        try SessionReader(path: record.path).analysisDigest(kind: StoredDigests.kind)
    }

    /// Adds an observer's note to a stopped session's file as muevald does (SessionRegistry's appendNote).
    private func addNote(_ note: ObserverNote, at time: Double, to path: String) throws {
        let file = try SessionFile(path: path, synchronous: .normal, indexed: true)
        _ = try file.store([[JournalRecord(device: ObserverNote.device, received: time, event: note.event(timestamp: time), origin: 0)]])
        try file.finish(buildingIndexes: false)
    }

    @Test func resultsFromStoredDigestsAreTheResultsOfFreshAnalyses() async throws {
        let fixture = try StudyFixture()
        defer { fixture.remove() }
        let data = try await fixture.write()
        let fresh = try await StudyAnalyzer.analyze(data)
        #expect(try data.sessions.allSatisfy { try stored($0) == nil }, "a read-only analysis stores nothing")
        let storing = try await StudyAnalyzer.analyze(data, digests: .readWrite)
        for record in data.sessions {
            let digest = try #require(try stored(record))
            #expect(digest.format == StoredDigests.format && digest.analysis == AnalysisVersion.current)
        }
        let made = try data.sessions.map { try stored($0)?.made }
        let fromDigests = try await StudyAnalyzer.analyze(data, digests: .readWrite)
        #expect(try data.sessions.map { try stored($0)?.made } == made, "current digests are read, not made again")
        same(fresh, storing)
        same(fresh, fromDigests)
        // Per iteration too: the catalog's placement (session 2 is placed by its file only) joined again.
        same(try await StudyAnalyzer.analyze(data, iteration: 1), try await StudyAnalyzer.analyze(data, iteration: 1, digests: .readWrite))
    }

    @Test func theStoredDigestIsWhatTheResultsAreMadeOf() async throws {
        let fixture = try StudyFixture()
        defer { fixture.remove() }
        let data = try await fixture.write()
        _ = try await StudyAnalyzer.analyze(data, digests: .readWrite)
        // A digest with the file's present source but one more run of Publish than session 1 has.
        let record = data.sessions[0]
        var digest = try SessionDigest(record, tasks: data.study.tasks, options: AnalysisOptions())
        digest.runCounts[F.publish, default: 0] += 5
        let source = try DigestSource(revision: SessionReader(path: record.path).revision(), tasks: data.study.tasks,
                                      options: AnalysisOptions()).text
        try StoredDigests.store(digest, source: source, path: record.path)
        let results = try await StudyAnalyzer.analyze(data)
        let publish = try #require(results.attempts.first { $0.participant == "P1" && $0.task == F.publish && $0.iteration == 1 })
        #expect(publish.runs == 6, "one run in the file, five more in the stored digest")
    }

    @Test func theDigestMadeAtTheStopFromTheReportsAnalysisIsTheOneTheStudyReads() async throws {
        let fixture = try StudyFixture()
        defer { fixture.remove() }
        let data = try await fixture.write()
        let fresh = try await StudyAnalyzer.analyze(data)
        for record in data.sessions {
            // As SessionReports does: what the file is before the analysis, the digest from the analysis after.
            let maker = try #require(StudyDigestMaker(sessionFile: record.path, options: AnalysisOptions()))
            let analysis = try AnalyzedSession(path: record.path)
            try maker.store(from: analysis, record: record, options: AnalysisOptions())
        }
        let made = try data.sessions.map { try stored($0)?.made }
        #expect(made.allSatisfy { $0 != nil })
        same(fresh, try await StudyAnalyzer.analyze(data, digests: .readWrite))
        #expect(try data.sessions.map { try stored($0)?.made } == made, "the stop's digests were current")
    }

    @Test func aNoteAddedAfterTheStopMakesTheDigestAgain() async throws {
        let fixture = try StudyFixture()
        defer { fixture.remove() }
        let data = try await fixture.write()
        _ = try await StudyAnalyzer.analyze(data, digests: .readWrite)
        let before = try #require(try stored(data.sessions[0]))
        try addNote(try ObserverNote(text: "added after the stop", source: .console), at: t0 + 30, to: data.sessions[0].path)
        let results = try await StudyAnalyzer.analyze(data, digests: .readWrite)
        let note = try #require(results.notes.first { $0.note.text == "added after the stop" })
        #expect(note.session == 1 && note.task == F.publish)
        same(results, try await StudyAnalyzer.analyze(data))
        let after = try #require(try stored(data.sessions[0]))
        #expect(after.source != before.source, "stored again with its new source")
    }

    @Test func aTranscriptWrittenAfterTheDigestKeepsTheQuotesCurrent() async throws {
        let fixture = try StudyFixture()
        defer { fixture.remove() }
        let data = try await fixture.write()
        _ = try await StudyAnalyzer.analyze(data, digests: .readWrite)
        // A new transcription of the stream: as many segments as before, other words.
        let device = try #require(try SessionReader(path: data.sessions[0].path).transcript().first?.device)
        let file = try SessionFile(path: data.sessions[0].path, synchronous: .normal, indexed: true)
        try file.writeTranscript(device: device, stream: "voice-1", segments: [
            TranscriptSegment(device: device, stream: "voice-1", start: t0 + 21, end: t0 + 22, text: "where did the send button go"),
            TranscriptSegment(device: device, stream: "voice-1", start: t0 + 96, end: t0 + 97, text: "okay next one"),
        ])
        try file.finish(buildingIndexes: false)
        let results = try await StudyAnalyzer.analyze(data, digests: .readWrite)
        let publish = try #require(results.attempts.first { $0.participant == "P1" && $0.task == F.publish && $0.iteration == 1 })
        #expect(publish.quotes.map(\.text) == ["where did the send button go"])
        same(results, try await StudyAnalyzer.analyze(data))
    }

    @Test func aDigestOfAnotherVersionOrUnreadableIsMadeAgain() async throws {
        let fixture = try StudyFixture()
        defer { fixture.remove() }
        let data = try await fixture.write()
        let fresh = try await StudyAnalyzer.analyze(data, digests: .readWrite)
        let current = try #require(try stored(data.sessions[0]))
        let garbage = Array("not a digest".utf8)
        // The same digest with a touch at NaN, 1e300: bit patterns the analysis never writes.
        var body = try #require(try JSONSerialization.jsonObject(with: Data(current.digest)) as? [String: Any])
        var touches = try #require(body["touches"] as? [[String: Any]])
        try #require(!touches.isEmpty)
        var absurd = Data()
        for value in [Double.nan, 1e300] { withUnsafeBytes(of: value.bitPattern.littleEndian) { absurd.append(contentsOf: $0) } }
        touches[0]["points"] = absurd.base64EncodedString()
        body["touches"] = touches
        let absurdPoints = Array(try JSONSerialization.data(withJSONObject: body))
        for spoilt in [
            StoredAnalysisDigest(kind: current.kind, format: current.format, analysis: current.analysis + 1, source: current.source,
                                 made: 0, digest: current.digest),
            StoredAnalysisDigest(kind: current.kind, format: current.format + 1, analysis: current.analysis, source: current.source,
                                 made: 0, digest: current.digest),
            StoredAnalysisDigest(kind: current.kind, format: current.format, analysis: current.analysis, source: current.source,
                                 made: 0, digest: garbage),
            StoredAnalysisDigest(kind: current.kind, format: current.format, analysis: current.analysis, source: current.source,
                                 made: 0, digest: absurdPoints),
        ] {
            try AnalysisDigestWriter.write(spoilt, toSessionFile: data.sessions[0].path)
            same(fresh, try await StudyAnalyzer.analyze(data, digests: .readWrite))
            let again = try #require(try stored(data.sessions[0]))
            #expect(again.made > 0 && again.analysis == AnalysisVersion.current && again.format == StoredDigests.format)
        }
    }

    @Test func changedTasksOrOptionsAreNotAnsweredFromAnOlderDigest() async throws {
        let fixture = try StudyFixture()
        defer { fixture.remove() }
        var data = try await fixture.write()
        _ = try await StudyAnalyzer.analyze(data, digests: .readWrite)
        // Publish took P1 34 s: within its 60 s limit, not within 20 s.
        data.study.tasks[0].timeLimit = 20
        let results = try await StudyAnalyzer.analyze(data, digests: .readWrite)
        let publish = try #require(results.attempts.first { $0.participant == "P1" && $0.task == F.publish && $0.iteration == 1 })
        #expect(publish.outcome == .failure && publish.reason == "over the 20 s limit")
        // An unresponsive tap needs 1.5 s without an answer over a 1 s window; with a 2 s window, P1's taps were answered.
        var options = AnalysisOptions()
        options.responseWindow = 2
        let patient = try await StudyAnalyzer.analyze(data, options: options, digests: .readWrite)
        let tapped = try #require(patient.attempts.first { $0.participant == "P1" && $0.task == F.publish && $0.iteration == 1 })
        #expect(tapped.unresponsiveTaps == 0 && publish.unresponsiveTaps == 2)
    }

    @Test func aFileThatCannotTakeTheDigestIsStillAnalysed() async throws {
        let fixture = try StudyFixture()
        defer { fixture.remove() }
        let data = try await fixture.write()
        let fresh = try await StudyAnalyzer.analyze(data)
        try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: data.sessions[0].path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: data.sessions[0].path) }
        same(fresh, try await StudyAnalyzer.analyze(data, digests: .readWrite))
        #expect(try stored(data.sessions[0]) == nil || getuid() == 0, "read-only to all but root")
    }

    @Test func theStudyReportFromDigestsEqualsTheOneFromAnalysesByteForByte() async throws {
        let fixture = try StudyFixture()
        defer { fixture.remove() }
        let data = try await fixture.write()
        // The report from fresh analyses, before any digest exists (read-only stores none).
        let freshIndex = try await StudyReportGenerator.generate(data, iteration: nil, output: fixture.directory + "/fresh",
                                                                 options: AnalysisOptions(), links: StudyReportLinks(), sessionReports: false)
        // The daemon's: makes and stores every digest; then one made from the stored digests alone.
        _ = try await StudyReportGenerator.generate(data, iteration: nil, output: fixture.directory + "/storing", options: AnalysisOptions(),
                                                    links: StudyReportLinks(), sessionReports: false, digests: .readWrite)
        #expect(try data.sessions.allSatisfy { try stored($0) != nil })
        let digestIndex = try await StudyReportGenerator.generate(data, iteration: nil, output: fixture.directory + "/digests",
                                                                  options: AnalysisOptions(), links: StudyReportLinks(), sessionReports: false)
        // Byte for byte but for the page's "generated" time, which differs when the reports straddle a minute.
        func page(_ path: String) throws -> String {
            try String(contentsOfFile: path, encoding: .utf8).replacing(try Regex(" · generated [^<]*"), with: "")
        }
        let fresh = try page(freshIndex)
        #expect(fresh.contains("<main>"))
        #expect(fresh == (try page(digestIndex)))
        #expect(fresh == (try page(fixture.directory + "/storing/index.html")))
        let shots = try FileManager.default.contentsOfDirectory(atPath: fixture.directory + "/fresh/shots").sorted()
        #expect(!shots.isEmpty)
        #expect(shots == (try FileManager.default.contentsOfDirectory(atPath: fixture.directory + "/digests/shots").sorted()))
    }
}
