internal import Foundation
internal import Logging
internal import NIOConcurrencyHelpers
internal import ReportCritique
internal import SessionAnalysis
internal import SessionModel

/// Where a session's report stands (`GET /api/sessions/ID/report`).
struct ReportState: Codable, Sendable, Equatable {
    enum State: String, Codable, Sendable { case none, running, ready, failed }
    var state: State
    var url: String?
    var error: String?
    /// When it was written (seconds since 1970).
    var generated: Double?
}

/// `POST /api/sessions/ID/report`: sections, or a saved configuration's name.
struct ReportChoice: Decodable, Sendable {
    var sections: [String]?
    var configuration: String?
}

/// What the report form offers.
struct ReportOptions: Encodable {
    struct Section: Encodable { var name: String; var title: String }
    struct Configuration: Encodable { var name: String; var sections: [String] }
    var sections: [Section]
    var configurations: [Configuration]
}

/// Analysis and report of sessions for the console: the default report of every session that stops
/// while muevald runs, made in the background at once (thesis 2.4.1: "as soon as the developer
/// stops the evaluation session … the framework should start the analysis phase"), and reports made
/// on request. Reports are directories under `<data>/reports/<session>/<name>/`, served as they are.
final class ConsoleReports: Sendable {
    static let defaultName = "default"

    private let root: String
    private let configurations: ReportConfigurationStore
    private let logger: Logger
    /// One task per report being written: a second request for it waits for the same one.
    private let running = NIOLockedValueBox<[String: Task<ReportState, Never>]>([:])
    private let problemMarks = NIOLockedValueBox<[Int64: [ProblemMark]]>([:])
    /// The last failure of each report, until it is written again: the page says why there is none.
    private let failures = NIOLockedValueBox<[String: ReportState]>([:])
    /// Told when a report is written or failed (the pages hear it over /api/updates).
    private let finished: @Sendable (_ session: Int64, _ name: String, ReportState) -> Void

    init(dataDirectory: String, configurations: ReportConfigurationStore, logger: Logger,
         finished: @escaping @Sendable (_ session: Int64, _ name: String, ReportState) -> Void) {
        root = dataDirectory + "/reports"
        self.configurations = configurations
        self.logger = logger
        self.finished = finished
    }

    func options() -> ReportOptions {
        ReportOptions(
            sections: SectionKind.allCases.map { .init(name: $0.rawValue, title: $0.rawValue.prefix(1).uppercased() + $0.rawValue.dropFirst()) },
            configurations: configurations.names().compactMap { name in
                (try? configurations.load(name)).map { .init(name: name, sections: $0.sections.map(\.rawValue)) }
            })
    }

    func directory(of session: Int64, name: String) -> String { "\(root)/\(session)/\(name)" }

    func state(of session: Int64, name: String) -> ReportState {
        if running.withLockedValue({ $0[key(session, name)] }) != nil { return ReportState(state: .running) }
        if let failure = failures.withLockedValue({ $0[key(session, name)] }) { return failure }
        let index = directory(of: session, name: name) + "/index.html"
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: index) else { return ReportState(state: .none) }
        return ReportState(state: .ready, url: "/sessions/\(session)/reports/\(name)/index.html",
                           generated: (attributes[.modificationDate] as? Date)?.timeIntervalSince1970)
    }

    /// The problems the last report of the session found, for the replay's scrubber.
    func problems(of session: Int64) -> [ProblemMark] {
        if let marks = problemMarks.withLockedValue({ $0[session] }) { return marks }
        let file = directory(of: session, name: Self.defaultName) + "/problems.json"
        guard let data = FileManager.default.contents(atPath: file),
              let marks = try? JSONDecoder().decode([ProblemMark].self, from: data) else { return [] }
        problemMarks.withLockedValue { $0[session] = marks }
        return marks
    }

    /// A session stopped: its default report starts now, in the background, and then its replay index.
    func sessionStopped(_ record: SessionRecord) {
        let report = start(record, name: Self.defaultName, configuration: ReportConfiguration())
        Task {
            _ = await report.value
            do {
                _ = try await replayIndex(of: record, rebuild: true)
            } catch {
                logger.error("replay index of session \(record.id) failed: \(error)")
            }
        }
    }

    /// The replay index (ReplayIndex) of a session. A stopped session's file changes only when a note
    /// is added, which changes its event count: its index is kept in `replay-index-EVENTS.json` next
    /// to its reports, so that the Replay page of a one-hour session does not wait for a scan of it.
    func replayIndex(of record: SessionRecord, rebuild: Bool = false) async throws -> [UInt8] {
        let problems = problems(of: record.id)
        guard record.state == .stopped else { return try await blocking { try ReplayIndex.build(record: record, problems: problems) } }
        let directory = "\(root)/\(record.id)"
        let file = "\(directory)/replay-index-\(record.events).json"
        return try await blocking {
            if !rebuild, let data = FileManager.default.contents(atPath: file) { return [UInt8](data) }
            let json = try ReplayIndex.build(record: record, problems: problems)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for old in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where old.hasPrefix("replay-index-") {
                try? FileManager.default.removeItem(atPath: directory + "/" + old)
            }
            try Data(json).write(to: URL(fileURLWithPath: file), options: .atomic)
            return json
        }
    }

    /// Writes the report the page asked for and returns when it is there.
    func generate(_ record: SessionRecord, choice: ReportChoice) async throws -> ReportState {
        var configuration = ReportConfiguration()
        var name = Self.defaultName
        if let saved = choice.configuration, !saved.isEmpty {
            do {
                configuration = try configurations.load(saved)
            } catch {
                throw ConsoleError.badRequest("\(error)")
            }
            name = "config-" + Self.directoryName(saved)
        }
        if let sections = choice.sections {
            do {
                configuration.sections = try SectionKind.list(sections.joined(separator: ","))
            } catch {
                throw ConsoleError.badRequest("\(error)")
            }
            if Set(configuration.sections) != Set(SectionKind.allCases) { name = "sections-" + configuration.sections.map(\.rawValue).joined(separator: "-") }
        }
        guard !configuration.sections.isEmpty else { throw ConsoleError.badRequest("choose at least one section") }
        return await start(record, name: name, configuration: configuration).value
    }

    /// A deleted session's reports go with it.
    func forget(_ session: Int64) {
        problemMarks.withLockedValue { $0[session] = nil }
        failures.withLockedValue { $0 = $0.filter { !$0.key.hasPrefix("\(session)/") } }
        try? FileManager.default.removeItem(atPath: "\(root)/\(session)")
    }

    private func start(_ record: SessionRecord, name: String, configuration: ReportConfiguration) -> Task<ReportState, Never> {
        let key = key(record.id, name)
        return running.withLockedValue { running in
            if let task = running[key] { return task }
            let task = Task { [self] in
                let result = await write(record, name: name, configuration: configuration)
                self.failures.withLockedValue { $0[key] = result.state == .failed ? result : nil }
                _ = self.running.withLockedValue { $0.removeValue(forKey: key) }
                self.finished(record.id, name, result)
                return result
            }
            running[key] = task
            return task
        }
    }

    private func write(_ record: SessionRecord, name: String, configuration: ReportConfiguration) async -> ReportState {
        let output = directory(of: record.id, name: name)
        let started = Date()
        do {
            let marks = try await blocking {
                let analysis = try AnalyzedSession(path: record.path, options: configuration.options)
                _ = try ReportWriter(configuration: configuration).write([analysis], to: output)
                let marks = analysis.problems.map { ProblemMark(t: $0.time, title: $0.kind.rawValue + ($0.view.map { " in " + $0 } ?? "")) }
                try JSONEncoder().encode(marks).write(to: URL(fileURLWithPath: output + "/problems.json"), options: .atomic)
                return marks
            }
            if name == Self.defaultName { problemMarks.withLockedValue { $0[record.id] = marks } }
            logger.info("report of session \(record.id) (\(name)) written in \(String(format: "%.2f", Date().timeIntervalSince(started))) s: \(output)")
            return ReportState(state: .ready, url: "/sessions/\(record.id)/reports/\(name)/index.html", generated: Date().timeIntervalSince1970)
        } catch {
            logger.error("report of session \(record.id) (\(name)) failed: \(error)")
            return ReportState(state: .failed, error: "\(error)")
        }
    }

    private func key(_ session: Int64, _ name: String) -> String { "\(session)/\(name)" }

    /// A saved configuration's name as one safe path component.
    static func directoryName(_ name: String) -> String {
        String(name.unicodeScalars.map { scalar -> Character in
            CharacterSet.alphanumerics.contains(scalar) && scalar.isASCII || scalar == "-" || scalar == "_" ? Character(scalar) : "_"
        })
    }
}
