internal import ArgumentParser
internal import ControlClient
internal import ControlProtocol
internal import Foundation
internal import SessionModel
#if canImport(Glibc)
internal import Glibc
#endif

// The commands that read a session's events: events, tail, export.

struct Events: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "A session's stored events, newest last.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Session id or name.") var session: String
    @Option(name: .customLong("class"), help: ArgumentHelp("Only events of this class (repeatable).", valueName: "C")) var classes: [String] = []
    @Option(help: "Show the last N events; 0 shows all.") var limit = 100
    @Option(help: ArgumentHelp("Only events whose class, device or payload contains TEXT, and the transcript's speech that contains it (any case).", valueName: "TEXT"))
    var grep: String?

    func run() async throws {
        let request = ControlRequest.Events(session: session, classes: classes, limit: limit, grep: grep)
        var table = ControlOutput.EventTable()
        let summary = try await global.client.call(request, onEvents: { page in
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
        let request = ControlRequest.Tail(target.map { .session($0) } ?? .all, classes: classes, device: device, grep: grep, since: since)
        var daemonStopped = false
        do {
            _ = try await global.client.call(request, onTail: { line in
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
        let open = try await global.client.call(ControlRequest.Status()).sessions
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

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Write a session's events as an XML property list or JSON lines.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Session id or name.") var session: String
    @Option(help: "plist (default) or jsonl.") var format: ExportFormat = .plist
    @Option(name: .customLong("class"), help: ArgumentHelp("Only events of this class (repeatable).", valueName: "C")) var classes: [String] = []
    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("Write to FILE instead of standard output.", valueName: "FILE")) var output: String?

    func run() async throws {
        let sink = try output.map(Output.create) ?? .standardOutput
        let summary = try await global.client.call(ControlRequest.Export(session: session, format: format, classes: classes)) {
            try sink.write($0)
        }
        if let output {
            try sink.close()
            Output.message("exported \(summary.events) events of session \(summary.session) to \(output)")
        }
    }
}
