public import ArgumentParser
internal import ControlClient
internal import ControlProtocol
internal import Foundation
internal import JournalStorage
internal import SessionModel
internal import WireProtocol
internal import Zeroconf
#if canImport(Glibc)
internal import Glibc
#endif

/// muevalctl: controls a running muevald over its control socket (docs/CONTROL.md).
@main
struct MuEvalCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "muevalctl",
        abstract: "Start and stop evaluation sessions on muevald and look at what they recorded.",
        discussion: "--socket PATH and --json go before or after the command: `muevalctl --json sessions` is `muevalctl sessions --json`.",
        subcommands: [Start.self, Stop.self, Status.self, Top.self, Sessions.self, Devices.self, Events.self, Tail.self, Note.self,
                      Export.self, Delete.self, Discover.self, Report.self, ReportConfig.self, Console.self, StudyCommand.self,
                      TaskMarkCommand.self, QuestionnaireCommand.self, MediaCommand.self, TranscribeCommand.self, ImportCommand.self])

    static func main() async {
        // A reader that goes away is an EPIPE that `Output` handles, not a signal death halfway through
        // a write; ignored before anything (NIO included) writes.
        signal(SIGPIPE, SIG_IGN)
        // What muevalctl writes (reports, exports, media, folders) holds participants' data: its owner's
        // alone (0600 files, 0700 folders), whatever umask the shell has.
        umask(umask(0) | 0o077)
        await main(GlobalArgumentOrder(root: Self.self).normalise(Array(CommandLine.arguments.dropFirst())))
    }
}

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The daemon's control socket (default: $MUEVAL_SOCKET, $XDG_RUNTIME_DIR/mueval, /run/mueval, ./mueval-data).", valueName: "PATH"))
    var socket: String?

    @Flag(name: .long, help: "Print JSON for scripts instead of tables.")
    var json = false

    var client: ControlClient { ControlClient(socketPath: socket ?? ControlSocketPath.clientDefault()) }

    /// Runs a request and prints its result as JSON or through `human`.
    func call<R: Codable & Sendable>(_ request: ControlRequest, as type: R.Type, human: (R) -> String) async throws {
        try show(try await client.call(request, as: R.self), human: human)
    }

    /// Prints `value` as JSON or through `human`.
    func show<R: Encodable>(_ value: R, human: (R) -> String) throws {
        try Output.standardOutput.write(json ? ControlOutput.json(value) + "\n" : human(value))
    }
}

/// A command that failed for a reason other than its arguments: one line, no usage text (ArgumentParser
/// adds the usage to a `ValidationError`, which is for what `validate()` finds).
struct Failure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

struct Start: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Start a session; prints its id. It records when its device (or the next device) connects.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "A name for the session (default session-ID).") var name: String?
    @Option(help: ArgumentHelp("Bind the session to this device id; without it the next device that connects claims it.", valueName: "ID")) var device: String?
    @Option(help: ArgumentHelp("The test user.", valueName: "NAME")) var user: String?
    @Option(help: ArgumentHelp("Event classes or sensor names to record, comma-separated (default: all).", valueName: "LIST")) var sensors: String?
    @Option(help: "Free-form notes.") var notes: String?
    @Flag(name: .customLong("pairing-code"), help: "Give the session a six-digit code (printed on a second line) that its device must present in <hello>.")
    var pairingCode = false
    @Option(help: ArgumentHelp("The study the session is part of (with --iteration and --participant).", valueName: "NAME")) var study: String?
    @Option(help: ArgumentHelp("The study's iteration.", valueName: "N")) var iteration: Int?
    @Option(help: ArgumentHelp("The participant's code; also the test user unless --user is given.", valueName: "CODE")) var participant: String?

    func validate() throws {
        let given = [study != nil, iteration != nil, participant != nil]
        guard given.allSatisfy({ $0 }) || given.allSatisfy({ !$0 }) else {
            throw ValidationError("a session in a study needs --study, --iteration and --participant together")
        }
    }

    func run() async throws {
        let request = ControlRequest(command: .start, name: name, device: device, user: user, notes: notes, sensors: sensors?.commaSeparated,
                                     pairing: pairingCode ? true : nil, study: study, iteration: iteration, participant: participant)
        try await global.call(request, as: SessionRecord.self) { session in
            "\(session.id)\n" + (session.pairingCode.map { "pairing code \($0): enter it on the device\n" } ?? "")
        }
    }
}

struct Stop: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Stop a session (or every open one): commits its events and finalises its file.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Session id or name.") var session: String?
    @Flag(help: "Stop every open session.") var all = false

    func validate() throws {
        guard all != (session != nil) else { throw ValidationError("give a session, or --all") }
    }

    func run() async throws {
        try await global.call(ControlRequest(command: .stop, session: session, all: all ? true : nil), as: [SessionRecord].self) { sessions in
            sessions.isEmpty ? "no open session\n" : sessions.map { "stopped session \($0.id) (\($0.name)): \($0.events) events in \($0.path)\n" }.joined()
        }
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The daemon, its open sessions and its counters.")
    @OptionGroup var global: GlobalOptions
    @Flag(name: [.short, .long], help: "Refresh every second, with event rates (like `top`).") var watch = false

    func run() async throws {
        guard watch else {
            return try await global.call(ControlRequest(command: .status), as: StatusReport.self, human: ControlOutput.status)
        }
        try await StatusWatch(global: global).run()
    }
}

struct Top: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Sessions, devices and event rates, refreshed every second (status --watch).")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await StatusWatch(global: global).run()
    }
}

/// `status --watch`: the status every second, with rates computed from the counters' growth.
struct StatusWatch {
    let global: GlobalOptions

    func run() async throws {
        Interrupt.exitCleanlyOnCtrlC()
        Output.endWhenReaderGoesAway()
        let clearScreen = isatty(STDOUT_FILENO) == 1 && !global.json
        var previous: (report: StatusReport, at: Date)?
        while true {
            let report = try await global.client.call(ControlRequest(command: .status), as: StatusReport.self)
            let now = Date()
            if global.json {
                try Output.standardOutput.write(ControlOutput.json(report).replacingOccurrences(of: "\n", with: "") + "\n")
            } else {
                let text = ControlOutput.watch(report, previous: previous.map { ($0.report, now.timeIntervalSince($0.at)) })
                try Output.standardOutput.write((clearScreen ? "\u{1B}[H\u{1B}[2J" : "\n") + text)
            }
            previous = (report, now)
            try await Task.sleep(for: .seconds(1))
        }
    }
}

struct Sessions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Every session, open and stopped.",
        discussion: "With --from postgres://…: every lab's sessions in the shared PostgreSQL (docs/POSTGRES.md).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var shared: SharedDatabaseOptions

    func run() async throws {
        if let sessions = try await shared.withArchive({ try await $0.sessions() }) {
            return try global.show(sessions, human: ControlOutput.sharedSessions)
        }
        try await global.call(ControlRequest(command: .sessions), as: [SessionRecord].self, human: ControlOutput.sessions)
    }
}

struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Every device that has connected.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await global.call(ControlRequest(command: .devices), as: [DeviceRecord].self, human: ControlOutput.devices)
    }
}

struct Events: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "A session's stored events, newest last.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Session id or name.") var session: String
    @Option(name: .customLong("class"), help: ArgumentHelp("Only events of this class (repeatable).", valueName: "C")) var classes: [String] = []
    @Option(help: "Show the last N events; 0 shows all.") var limit = 100
    @Option(help: ArgumentHelp("Only events whose class, device or payload contains TEXT, and the transcript's speech that contains it (any case).", valueName: "TEXT"))
    var grep: String?

    func run() async throws {
        let request = ControlRequest(command: .events, session: session, classes: classes, limit: limit, grep: grep)
        var table = ControlOutput.EventTable()
        let summary = try await global.client.call(request, as: EventsSummary.self, onEvents: { page in
            if global.json {
                // One JSON object per line (the format of `export --format jsonl`), ready for jq.
                for event in page { try Output.standardOutput.write(event.jsonLine()) }
            } else {
                try Output.standardOutput.write(table.page(page))
            }
        }, onSpeech: { segments in
            if global.json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                for segment in segments {
                    try Output.standardOutput.write(String(decoding: try encoder.encode(SpeechLine(speech: segment)), as: UTF8.self) + "\n")
                }
            } else {
                try Output.standardOutput.write(table.speech(segments))
            }
        })
        if summary.events == 0, summary.speech == 0, !global.json {
            try Output.standardOutput.write(grep == nil ? "no events\n" : "nothing matches\n")
        }
    }

    /// A transcript segment among `--json`'s event lines, told apart by its key.
    private struct SpeechLine: Encodable {
        var speech: TranscriptSegment
    }
}

struct Tail: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow a session's events as they are stored (like journalctl -f).",
        discussion: "Without SESSION it follows the session that records; --all follows every session. Ctrl-C ends it.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Session id or name (default: the recording session).") var session: String?
    @Flag(help: "Follow every session, also those started later.") var all = false
    @Option(name: .customLong("class"), help: ArgumentHelp("Only events of this class (repeatable).", valueName: "C")) var classes: [String] = []
    @Option(help: ArgumentHelp("Only events of this device id.", valueName: "D")) var device: String?
    @Option(help: ArgumentHelp("Only events whose class, device or payload contains TEXT.", valueName: "TEXT")) var grep: String?
    @Option(help: ArgumentHelp("First print the last N stored events.", valueName: "N")) var since: Int?
    @Option(help: "Colour the classes: auto (when the output is a terminal and NO_COLOR is unset), always or never.") var color: ColorChoice = .auto

    enum ColorChoice: String, ExpressibleByArgument, CaseIterable { case auto, always, never }

    func validate() throws {
        if all, session != nil { throw ValidationError("give a session or --all, not both") }
        if let since, since < 0 { throw ValidationError("--since takes a number of events, 0 or more") }
    }

    func run() async throws {
        Interrupt.exitCleanlyOnCtrlC()
        Output.endWhenReaderGoesAway()
        var target = session
        if !all, target == nil { target = try await chooseSession() }
        let formatter = TailFormatter(style: global.json ? .json : .human(color: useColor))
        let request = ControlRequest(command: .tail, session: target, all: all ? true : nil, device: device,
                                     classes: classes.isEmpty ? nil : classes, grep: grep, since: since)
        var daemonStopped = false
        do {
            _ = try await global.client.call(request, as: Empty.self, onTail: { line in
                if line.kind == .daemonStopping { daemonStopped = true }
                try Output.standardOutput.write(formatter.format(line) + "\n")
            })
        } catch ControlClientError.connectionLost {
            daemonStopped = true
        }
        if daemonStopped {
            Output.message("muevalctl: muevald stopped; the tail ends here")
            throw ExitCode.failure
        }
    }

    private var useColor: Bool {
        switch color {
        case .always: true
        case .never: false
        case .auto: isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"].map(\.isEmpty) ?? true
        }
    }

    /// The one recording session (or the one open session); asks when there are several.
    private func chooseSession() async throws -> String {
        let open = try await global.client.call(ControlRequest(command: .status), as: StatusReport.self).sessions
        let recording = open.filter { $0.state == .recording }
        let candidates = recording.isEmpty ? open : recording
        if candidates.count == 1 { return String(candidates[0].id) }
        guard !candidates.isEmpty else {
            throw Failure("no session is open: start one with `muevalctl start`, or follow every session with --all")
        }
        guard isatty(STDIN_FILENO) == 1 else {
            // One line, as every error: the choices inline.
            let choices = candidates.map { "\($0.id) (\($0.name))" }.joined(separator: ", ")
            throw Failure("several sessions record: \(choices); name one, or follow every session with --all")
        }
        let list = candidates.map { "  \($0.id)  \($0.name)  \($0.testUser ?? "-")  \($0.device ?? "-")" }.joined(separator: "\n")
        // On stderr, as prompts go: standard output is the tail's, perhaps a pipe.
        try? Output.standardError.write("Several sessions record:\n\(list)\nFollow which one? ")
        guard let answer = readLine()?.trimmingCharacters(in: .whitespaces), !answer.isEmpty else {
            throw Failure("no session chosen")
        }
        return answer
    }
}

struct Note: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add an observer's note to a session, at this moment on its device's clock (a stopped session takes it too).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Session id or name.") var session: String
    @Argument(help: "What you observed.") var text: String
    @Option(help: ArgumentHelp("note (default), problem, quote, task-done, or a label of your own.", valueName: "K")) var kind: String?

    func run() async throws {
        let event = try await global.client.call(ControlRequest(command: .note, session: session, text: text, kind: kind),
                                                 as: StoredEvent.self)
        if global.json {
            // As `events --json` writes an event: one object on one line, the typed payload included.
            try Output.standardOutput.write(event.jsonLine())
        } else {
            let time = ControlOutput.time(event.timestamp, fractional: true) + (event.timestampEstimated ? "*" : "")
            try Output.standardOutput.write("note \(event.id) at \(time): \(event.summary)\n")
        }
    }
}

/// Ctrl-C ends a following command with status 0, its output flushed, instead of a signal death.
enum Interrupt {
    static func exitCleanlyOnCtrlC() {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .main)
        source.setEventHandler { exit(0) }
        source.resume()
        handlers.append(source)
    }

    nonisolated(unsafe) private static var handlers: [DispatchSourceSignal] = []
}

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Write a session's events as an XML property list or JSON lines.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Session id or name.") var session: String
    @Option(help: "plist (default) or jsonl.") var format: ExportFormat = .plist
    @Option(name: .customLong("class"), help: ArgumentHelp("Only events of this class (repeatable).", valueName: "C")) var classes: [String] = []
    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("Write to FILE instead of standard output.", valueName: "FILE")) var output: String?

    func run() async throws {
        let sink = try output.map(Output.create) ?? .standardOutput
        let summary = try await global.client.call(
            ControlRequest(command: .export, session: session, classes: classes, format: format),
            as: ExportSummary.self) { try sink.write($0) }
        if let output {
            try sink.close()
            Output.message("exported \(summary.events) events of session \(summary.session) to \(output)")
        }
    }
}

struct Delete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete a stopped session and its file.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Session id or name.") var session: String

    func run() async throws {
        try await global.call(ControlRequest(command: .delete, session: session), as: SessionRecord.self) {
            "deleted session \($0.id) (\($0.name))\n"
        }
    }
}

struct Console: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a single-use login link to muevald's web console (the Mobile Monitor).",
        discussion: """
            The link works once, within a few minutes (console.login_code_seconds). Whoever may use the control \
            socket may use the console. From a laptop: `ssh -L 28080:127.0.0.1:28080 LAB muevalctl console`, then \
            open the link on the laptop (docs/CONSOLE.md).
            """)
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Open the link in the desktop's browser (xdg-open).") var open = false

    func run() async throws {
        let link = try await global.client.call(ControlRequest(command: .console), as: ConsoleLink.self)
        try global.show(link) { "\($0.url)\n" }
        if open { try Browser.open(link.url) }
    }
}

struct Discover: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the capture servers announced on the network (the first thing to check when a device does not connect).")
    @Option(help: "Seconds to browse.") var timeout: Double = 3
    @Option(help: "The service type to browse for.") var type = ServiceAnnouncement.captureServiceType
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let services = try await ZeroconfBrowser.browse(type: type, timeout: timeout)
        try global.show(services) { services in
            guard !services.isEmpty else {
                return "no capture server announced within \(timeout) s (is avahi-daemon running on both hosts, and muevald without --no-zeroconf?)\n"
            }
            var table = TextTable(["NAME", "HOST", "ADDRESSES", "PORT", "TXT"])
            for service in services {
                table.add([service.name, service.host, service.addresses.joined(separator: ","), String(service.port),
                           service.txt.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")])
            }
            return table.render()
        }
    }
}

extension ExportFormat: ExpressibleByArgument {}
extension TaskMark: ExpressibleByArgument {}
extension TaskOutcome: ExpressibleByArgument {}

