internal import ArgumentParser
internal import ControlProtocol
internal import Foundation
internal import ReportCritique
internal import SessionAnalysis
internal import SessionModel

/// `muevalctl report`: analysis and critique of one session, or of several compared side by side (docs/REPORTS.md).
struct Report: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write an HTML usability report of one or more sessions (several are compared side by side), or of a study.",
        discussion: """
            SESSION is a session id or name known to muevald, or the path of a session file (a copy works \
            without the daemon). The report is a directory to open in any browser: index.html, report.css, \
            report.js and the screenshots. Sections: \(SectionKind.allCases.map(\.rawValue).joined(separator: ", ")). \
            With --study NAME instead of sessions: the study report (docs/STUDIES.md), made from every session of the \
            study (of one iteration with --iteration) and its questionnaires. With --from postgres://…, the sessions \
            are read from the shared PostgreSQL that labs replicate into (docs/POSTGRES.md).
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var shared: SharedDatabaseOptions
    @Argument(help: ArgumentHelp("Session ids, names or session file paths; with --from, uuids, LAB:ID or names.", valueName: "SESSION"))
    var sessions: [String] = []
    @Option(help: ArgumentHelp("Report on this study instead of sessions.", valueName: "NAME")) var study: String?
    @Option(help: ArgumentHelp("With --study: only this iteration.", valueName: "N")) var iteration: Int?
    @Flag(help: "With --study: also write each session's own report into DIR/sessions/ID, linked from the study report.")
    var sessionReports = false
    @Option(help: ArgumentHelp("With --study: the web console's address (such as http://127.0.0.1:28080), for links to each problem's moment in its replay.", valueName: "URL"))
    var console: String?
    @Option(help: ArgumentHelp("The report directory (default: the configuration's, else ./report).", valueName: "DIR")) var out: String?
    @Option(help: ArgumentHelp("Sections to include, comma-separated, in this order.", valueName: "LIST")) var sections: String?
    @Option(help: ArgumentHelp("Start from a saved report configuration (see report-config).", valueName: "NAME")) var config: String?
    @Flag(help: "Open the report in the desktop's browser (xdg-open).") var open = false

    func validate() throws {
        guard (study == nil) != sessions.isEmpty else { throw ValidationError("give session ids, names or files, or --study NAME") }
        if study == nil, iteration != nil || sessionReports || console != nil {
            throw ValidationError("--iteration, --session-reports and --console go with --study")
        }

    }

    func run() async throws {
        if let study { return try await studyReport(study) }
        var configuration = try config.map { try ReportConfigurationStore().load($0) } ?? ReportConfiguration()
        if let sections { configuration.sections = try SectionKind.list(sections) }
        let output = out ?? configuration.output ?? "report"
        let shared = try await shared.withArchive { archive in
            try await archive.withSessionFiles(sessions) { files in
                try ReportGenerator.generate(sessionFiles: files, configuration: configuration, output: output)
            }
        }
        let index: String
        if let shared {
            index = shared
        } else {
            index = try ReportGenerator.generate(sessionFiles: try await sessionFiles(), configuration: configuration, output: output)
        }
        try global.show(ReportLocation(index: index)) { "\($0.index)\n" }
        if open { try Browser.open(index) }
    }

    private func studyReport(_ study: String) async throws {
        let options = try config.map { try ReportConfigurationStore().load($0).options } ?? AnalysisOptions()
        let (iteration, output, console, sessionReports) = (iteration, out ?? "report-\(study)", console, sessionReports)
        func generate(_ data: StudyData) async throws -> String {
            try await StudyReportGenerator.generate(data, iteration: iteration, output: output, options: options,
                                                    links: StudyReportLinks(console: console), sessionReports: sessionReports)
        }
        // From the shared PostgreSQL: every lab's sessions of the study, restored into files for the report.
        let shared = try await self.shared.withArchive { archive in try await archive.withStudy(study, generate) }
        let index: String
        if let shared {
            index = shared
        } else {
            index = try await generate(try await StudyOutput.data(study, global: global))
        }
        try global.show(ReportLocation(index: index)) { "\($0.index)\n" }
        if open { try Browser.open(index) }
    }

    /// Paths stay paths; the daemon is asked (once) for the files of ids and names.
    private func sessionFiles() async throws -> [String] {
        var known: [SessionRecord]?
        var files: [String] = []
        for session in sessions {
            if session.contains("/") || session.hasSuffix(".sqlite") || FileManager.default.fileExists(atPath: session) {
                files.append(session)
                continue
            }
            if known == nil {
                do {
                    known = try await global.client.call(ControlRequest.ListSessions())
                } catch {
                    throw Failure("\"\(session)\" is not a session file, and muevald cannot be asked for it: \(error)")
                }
            }
            guard let record = known!.first(where: { String($0.id) == session }) ?? known!.first(where: { $0.name == session }) else {
                throw Failure("muevald knows no session \"\(session)\"; see `muevalctl sessions`")
            }
            files.append(record.path)
        }
        return files
    }
}

/// What `report --json` prints.
struct ReportLocation: Encodable {
    let index: String
}

/// `muevalctl report-config`: named report configurations, reused by `report --config`.
struct ReportConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report-config",
        abstract: "Save, list and show named report configurations (sections, thresholds, output directory).",
        discussion: "They are JSON files in $XDG_CONFIG_HOME/mueval/reports (default ~/.config/mueval/reports).",
        subcommands: [Save.self, List.self, Show.self])

    struct Save: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Save a configuration (replacing one of the same name).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The configuration's name.") var name: String
        @Option(help: ArgumentHelp("Sections, comma-separated, in order (default: all).", valueName: "LIST")) var sections: String?
        @Option(help: ArgumentHelp("The report directory.", valueName: "DIR")) var out: String?
        @Option(name: .customLong("set"), help: ArgumentHelp("A threshold, such as responseWindow=1.5 (repeatable; docs/REPORTS.md lists them).", valueName: "KEY=VALUE"))
        var settings: [String] = []
        @Option(help: ArgumentHelp("Group a view into a functionality, such as TimetableViewController=Timetable (repeatable).", valueName: "VIEW=NAME"))
        var functionality: [String] = []

        func run() throws {
            var configuration = ReportConfiguration(output: out)
            if let sections { configuration.sections = try SectionKind.list(sections) }
            configuration.options = try options()
            let store = ReportConfigurationStore()
            try store.save(configuration, as: name)
            try global.show(["path": store.path(of: name)]) { "saved \($0["path"]!)\n" }
        }

        /// The thresholds through their JSON form, so that every option is settable without a flag of its own.
        private func options() throws -> AnalysisOptions {
            var json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(AnalysisOptions())) as! [String: Any]
            for setting in settings {
                let (key, value) = try pair(setting)
                guard json[key] != nil, key != "functionalities", let number = Double(value) else {
                    let keys = json.keys.filter { $0 != "functionalities" }.sorted().joined(separator: ", ")
                    throw Failure("--set \(setting): give one of \(keys) and a number")
                }
                json[key] = number
            }
            var groups: [String: String] = [:]
            for entry in functionality {
                let (view, name) = try pair(entry)
                groups[view] = name
            }
            json["functionalities"] = groups
            return try JSONDecoder().decode(AnalysisOptions.self, from: JSONSerialization.data(withJSONObject: json))
        }

        private func pair(_ text: String) throws -> (String, String) {
            let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty else { throw Failure("expected KEY=VALUE, got \(text)") }
            return (parts[0], parts[1])
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The saved configurations.")
        @OptionGroup var global: GlobalOptions

        func run() throws {
            let store = ReportConfigurationStore()
            try global.show(store.names()) { names in
                names.isEmpty ? "no report configuration in \(store.directory)\n" : names.map { $0 + "\n" }.joined()
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a saved configuration (its JSON file).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The configuration's name.") var name: String

        /// The file as it is, with or without --json: it is JSON already.
        func run() throws {
            let store = ReportConfigurationStore()
            _ = try store.load(name)
            let text = try String(contentsOfFile: store.path(of: name), encoding: .utf8)
            try Output.standardOutput.write(text.hasSuffix("\n") ? text : text + "\n")
        }
    }
}

/// Opens a file in the desktop's browser.
enum Browser {
    static func open(_ path: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["xdg-open", path]
        do {
            try process.run()
        } catch {
            throw Failure("cannot start xdg-open (\(error)); open \(path) in a browser")
        }
    }
}
