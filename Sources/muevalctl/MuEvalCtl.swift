public import ArgumentParser
internal import BuildInfo
internal import ControlClient
internal import ControlProtocol
internal import Foundation
internal import SessionModel
internal import WireProtocol
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
        version: BuildInfo.versionLine(program: "muevalctl"),
        subcommands: [Start.self, Stop.self, Status.self, Top.self, Sessions.self, Devices.self, Events.self, Tail.self, Note.self,
                      Export.self, Delete.self, Discover.self, Report.self, ReportConfig.self, Console.self, StudyCommand.self,
                      TaskMarkCommand.self, QuestionnaireCommand.self, MediaCommand.self, TranscribeCommand.self, ImportCommand.self,
                      PoolCommand.self])

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
    func call<Payload: ControlPayload>(_ request: Payload, human: (Payload.Reply) -> String) async throws {
        try show(try await client.call(request), human: human)
    }

    /// Prints a stored note or task mark: as `events --json` writes an event (one object on one line, the
    /// typed payload included), or `LABEL ID at TIME: SUMMARY`, the time marked `*` where it is muevald's.
    func show(stored event: StoredEvent, as label: String) throws {
        if json { return try Output.standardOutput.write(event.jsonLine()) }
        let time = ControlOutput.time(event.timestamp, fractional: true) + (event.timestampEstimated ? "*" : "")
        try Output.standardOutput.write("\(label) \(event.id) at \(time): \(event.summary)\n")
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

extension ExportFormat: ExpressibleByArgument {}
extension TaskMark: ExpressibleByArgument {}
extension TaskOutcome: ExpressibleByArgument {}
