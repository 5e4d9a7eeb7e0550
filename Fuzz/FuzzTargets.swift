// The fuzz targets past the parser (docs/FUZZING.md): each consumer of stored or received data, driven by
// the fuzzer's input. One binary; `MUEVAL_FUZZ_TARGET` picks the target. Besides crashes, leaks and hangs,
// each checks what must hold of its output.

internal import Foundation
internal import ControlProtocol
internal import JournalStorage
internal import ReplayIndex
internal import ReportCritique
internal import SessionAnalysis
internal import SessionImport
internal import SessionModel
internal import StudyAnalysis
internal import WireProtocol

enum FuzzTarget: String, CaseIterable {
    case wire, session, study, replay, media, `import`, console, visitor, control, page

    func run(_ bytes: [UInt8]) throws {
        switch self {
        case .wire: WireFuzz.run(bytes)
        case .session: try SessionFuzz.run(bytes)
        case .study: try StudyFuzz.run(bytes)
        case .replay: try ReplayFuzz.run(bytes)
        case .media: try MediaFuzz.run(bytes)
        case .import: try ImportFuzz.run(bytes)
        case .console: ConsoleFuzz.run(bytes)
        case .visitor: try VisitorFuzz.run(bytes)
        case .control: ControlFuzz.run(bytes)
        case .page: PageFuzz.run(bytes)
        }
    }
}

/// A directory of its own for one input, removed afterwards: every run starts from nothing.
func withScratch<T>(_ body: (String) throws -> T) throws -> T {
    let directory = NSTemporaryDirectory() + "mueval-fuzz-\(getpid())"
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try body(directory)
}

/// Runs async work from libFuzzer's synchronous callback and waits for it.
func waitFor<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}

private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

/// Analysis and the session report of a fuzzed session file: the path of `muevalctl report` and of the
/// report muevald writes when a session stops.
enum SessionFuzz {
    static func run(_ bytes: [UInt8]) throws {
        try withScratch { directory in
            var input = FuzzInput(bytes)
            let path = directory + "/session.sqlite"
            try FuzzSession.write(&input, to: path)
            let analysis = try AnalyzedSession(path: path)
            _ = analysis.problems
            var writer = ReportWriter(configuration: ReportConfiguration())
            // The face scan is a Python subprocess per video (its output's checks have their own tests): here the
            // section takes its "not installed" path, so that an input costs no process and the run stays in-process.
            writer.faceScanner.python = "/nonexistent/python3"
            let index = try writer.write([analysis], to: directory + "/report")
            precondition(FileManager.default.fileExists(atPath: index), "the report has no index.html")
        }
    }
}

/// The study analysis, its report and its CSV from a study of fuzzed sessions, tasks and answers.
enum StudyFuzz {
    static func run(_ bytes: [UInt8]) throws {
        try withScratch { directory in
            var input = FuzzInput(bytes)
            let tasks = (0..<(1 + input.below(3))).map { _ in
                StudyTask(name: input.string(), instructions: nil, timeLimit: input.bool() ? input.double() : nil,
                          success: [TaskSuccess.observer, .view(input.string()), .event(input.string())][input.below(3)],
                          expectedPath: (0..<input.below(4)).map { _ in input.string() })
            }
            let iterations = [StudyIteration(number: 1, label: "baseline", created: 0), StudyIteration(number: 2, created: 0)]
            let participants = ["P01", "P02"].map { Participant(code: $0, created: 0) }
            let study = Study(name: "fuzz", created: 0, iterations: iterations, tasks: tasks, participants: participants, questions: [])
            var responses = StudyResponses()
            for _ in 0..<input.below(4) {
                let iteration = 1 + input.below(2), participant = participants[input.below(2)].code
                if let sus = try? SUSResponse(iteration: iteration, participant: participant,
                                              items: (0..<10).map { _ in Int(truncatingIfNeeded: input.integer()) }, recorded: input.double()) {
                    responses.sus.append(sus)
                }
                if let seq = try? SEQResponse(iteration: iteration, participant: participant, task: tasks[0].name,
                                              rating: Int(truncatingIfNeeded: input.integer()), recorded: input.double()) {
                    responses.seq.append(seq)
                }
            }
            var sessions: [SessionRecord] = []
            for id in 1...(1 + input.below(3)) {
                let context = StudyContext(study: study, iteration: iterations[input.below(2)], participant: participants[input.below(2)])
                // Each session's share of the input: a length, then its bytes.
                var part = FuzzInput(input.bytes(Int(input.byte()) << 4 | Int(input.byte() & 0x0F)))
                var record = try FuzzSession.write(&part, to: directory + "/session-\(id).sqlite", study: context)
                record.id = Int64(id)
                sessions.append(record)
            }
            let data = StudyData(study: study, sessions: sessions, responses: responses)
            let output = directory + "/report"
            let results = try waitFor { try await StudyAnalyzer.analyze(data, iteration: nil) }
            _ = StudyExport.csv(results)
            let index = try StudyReportWriter().write(results, to: output, links: StudyReportLinks(console: "http://127.0.0.1:28080"))
            precondition(FileManager.default.fileExists(atPath: index), "the study report has no index.html")
        }
    }
}

/// The replay page's index of a fuzzed session: it must be JSON the browser can parse.
enum ReplayFuzz {
    static func run(_ bytes: [UInt8]) throws {
        try withScratch { directory in
            var input = FuzzInput(bytes)
            let record = try FuzzSession.write(&input, to: directory + "/session.sqlite")
            // The index file as muevald writes it, read back as the old JSON route serves it.
            try ReplayIndex.write(record: record, problems: [ProblemMark(t: 1, title: "a problem")], to: directory + "/replay.index")
            guard let file = try ReplayIndexFile(path: directory + "/replay.index") else { preconditionFailure("no replay index written") }
            let json = try file.wholeJSON()
            do {
                _ = try JSONSerialization.jsonObject(with: Data(json))
            } catch {
                preconditionFailure("the replay index is not JSON (\(error)): \(String(decoding: json.prefix(2000), as: UTF8.self))")
            }
        }
    }
}

/// Media assembly of fuzzed chunks (any part, start, header, gap): each stream's layout, byte ranges of it
/// (the console's <audio>) and the whole file (`muevalctl media`) must agree with the layout's size.
enum MediaFuzz {
    /// Beyond this a stream is not written whole (an hour of silence is allowed: gigabytes); ranges still are.
    static let wholeLimit: Int64 = 8 << 20

    static func run(_ bytes: [UInt8]) throws {
        try withScratch { directory in
            var input = FuzzInput(bytes)
            let path = directory + "/session.sqlite"
            try FuzzSession.write(&input, to: path)
            let reader = try SessionReader(path: path)
            for stream in try reader.mediaStreams() {
                guard let layout = try reader.mediaLayout(device: stream.device, stream: stream.stream) else {
                    preconditionFailure("stream \(stream.stream) listed without a layout")
                }
                let total = layout.totalBytes
                precondition(total >= 0, "negative size \(total)")
                var offset: Int64 = 0
                for piece in layout.pieces {
                    precondition(piece.offset == offset && piece.length >= 0, "pieces do not follow each other")
                    offset += piece.length
                }
                // Ranges as the console asks for them: the start, the end, one around each piece's start.
                var ranges = [0..<min(total, 4096), max(0, total - 4096)..<total, total..<total]
                for piece in layout.pieces.prefix(16) { ranges.append(max(0, piece.offset - 7)..<min(total, piece.offset + 9)) }
                for range in ranges {
                    let got = try reader.mediaBytes(layout, range: range)
                    precondition(Int64(got.count) == range.count, "range \(range) of \(total) bytes gave \(got.count)")
                }
                if total <= wholeLimit {
                    var written: Int64 = 0
                    try reader.writeMedia(layout) { written += Int64($0.count) }
                    precondition(written == total, "wrote \(written) bytes of a \(total)-byte layout")
                }
            }
        }
    }
}

/// Every import reader through the importer muevald runs: the first byte picks the format (or lets the
/// content tell), the rest is the file. What gets imported is then analysed, as a report of it would.
enum ImportFuzz {
    static func run(_ bytes: [UInt8]) throws {
        try withScratch { directory in
            let formats: [ImportFormat?] = [nil] + ImportFormat.allCases
            let format = formats[Int(bytes.first ?? 0) % formats.count]
            let path = directory + "/input"
            try Data(bytes.dropFirst()).write(to: URL(fileURLWithPath: path))
            let catalog = try Catalog(directory: directory + "/data")
            let file = try ImportFile.open(path)
            let outcomes: [ImportOutcome]
            do {
                outcomes = try SessionImporter(catalog: catalog, lab: "fuzz").run(ImportRequest(files: [file], format: format), now: 1_298_000_000)
            } catch {
                // Refused: the error is for a person, and it may not quote the file (it may be a secret).
                let text = "\(error)"
                precondition(!text.isEmpty, "an empty error")
                return
            }
            for outcome in outcomes {
                let analysis = try AnalyzedSession(path: outcome.session.path)
                _ = analysis.problems
            }
        }
    }
}

/// The control socket's request line, as muevald's control server decodes it: what decodes must encode and
/// decode to the same request (muevalctl sends what it encodes).
enum ControlFuzz {
    static func run(_ bytes: [UInt8]) {
        guard let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(bytes)) else { return }
        let encoded: Data
        do {
            encoded = try JSONEncoder().encode(request)
        } catch {
            preconditionFailure("a decoded request does not encode: \(error)")
        }
        guard let again = try? JSONDecoder().decode(ControlRequest.self, from: encoded) else {
            preconditionFailure("an encoded request does not decode: \(String(decoding: encoded, as: UTF8.self))")
        }
        precondition(again == request, "a request changed in a round trip")
    }
}
