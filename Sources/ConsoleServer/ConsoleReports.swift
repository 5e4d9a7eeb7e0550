internal import Foundation
internal import Logging
internal import ReportCritique
internal import SessionCore
internal import SessionModel
internal import SessionReports

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

/// The console's side of sessions' reports: the form's options, reports on request, and the
/// replay index, which carries the default report's problems. The reports themselves, the automatic
/// one of every stopped session among them, are `SessionReports`' (the daemon's), shared with the console.
struct ConsoleReports: Sendable {
    let store: SessionReports
    let configurations: ReportConfigurationStore
    private let root: String
    private let logger: Logger

    init(store: SessionReports, dataDirectory: String, configurations: ReportConfigurationStore, logger: Logger) {
        self.store = store
        root = dataDirectory + "/reports"
        self.configurations = configurations
        self.logger = logger
    }

    func options() -> ReportOptions {
        ReportOptions(
            sections: SectionKind.allCases.map { .init(name: $0.rawValue, title: $0.rawValue.prefix(1).uppercased() + $0.rawValue.dropFirst()) },
            configurations: configurations.names().compactMap { name in
                (try? configurations.load(name)).map { .init(name: name, sections: $0.sections.map(\.rawValue)) }
            })
    }

    /// The replay index (ReplayIndex) of a session. A stopped session's file changes only when a note
    /// is added, which changes its event count: its index is kept in `replay-index-EVENTS.json` next
    /// to its reports, so that the Replay page of a one-hour session does not wait for a scan of it.
    func replayIndex(of record: SessionRecord, rebuild: Bool = false) async throws -> [UInt8] {
        let problems = store.problems(of: record.id)
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
        var name = SessionReports.defaultName
        if let saved = choice.configuration, !saved.isEmpty {
            do {
                configuration = try configurations.load(saved)
            } catch {
                throw ConsoleError.badRequest("\(error)")
            }
            name = "config-" + SessionReports.directoryName(saved)
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
        return await store.write(record, name: name, configuration: configuration).value
    }

    /// Follows the reports as they are written: the pages hear of each, and the problems of a
    /// default report (the automatic one among them) go into the session's replay index.
    func follow(_ finished: AsyncStream<FinishedReport>, updates: ConsoleUpdates, registry: SessionRegistry) async {
        for await report in finished {
            if let message = try? ConsoleUpdates.report(session: report.session, name: report.name, state: report.state) { updates.send(message) }
            guard report.name == SessionReports.defaultName,
                  let record = try? await blocking({ try registry.find(String(report.session)) }) else { continue }
            do {
                _ = try await replayIndex(of: record, rebuild: true)
            } catch {
                logger.error("replay index of session \(record.id) failed: \(error)")
            }
        }
    }
}
