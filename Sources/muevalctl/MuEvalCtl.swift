import ArgumentParser
import Control
import Foundation
import JournalStorage
import Zeroconf

/// muevalctl: controls a running muevald over its control socket (docs/CONTROL.md).
@main
struct MuEvalCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "muevalctl",
        abstract: "Start and stop evaluation sessions on muevald and look at what they recorded.",
        subcommands: [Start.self, Stop.self, Status.self, Sessions.self, Devices.self, Events.self, Export.self, Delete.self, Discover.self])
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
        let result = try await client.call(request, as: R.self)
        if json {
            print(ControlOutput.json(result))
        } else {
            print(human(result), terminator: "")
        }
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

    func run() async throws {
        let list = sensors?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        try await global.call(ControlRequest(command: .start, name: name, device: device, user: user, notes: notes, sensors: list),
                              as: SessionRecord.self) { "\($0.id)\n" }
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

    func run() async throws {
        try await global.call(ControlRequest(command: .status), as: StatusReport.self, human: ControlOutput.status)
    }
}

struct Sessions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Every session, open and stopped.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
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

    func run() async throws {
        let request = ControlRequest(command: .events, session: session, classes: classes, limit: limit)
        let events = try await global.client.call(request, as: [StoredEvent].self)
        if global.json {
            // One JSON object per line (the format of `export --format jsonl`), ready for jq.
            for event in events { FileHandle.standardOutput.write(Data(event.jsonLine())) }
        } else {
            print(ControlOutput.events(events), terminator: "")
        }
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
        let sink: FileHandle
        if let output {
            guard FileManager.default.createFile(atPath: output, contents: nil), let handle = FileHandle(forWritingAtPath: output) else {
                throw ValidationError("cannot write \(output)")
            }
            sink = handle
        } else {
            sink = FileHandle.standardOutput
        }
        let summary = try await global.client.call(
            ControlRequest(command: .export, session: session, classes: classes, format: format),
            as: ExportSummary.self) { sink.write(Data($0.utf8)) }
        if let output {
            try sink.close()
            FileHandle.standardError.write(Data("exported \(summary.events) events of session \(summary.session) to \(output)\n".utf8))
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

struct Discover: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the capture servers announced on the network (the first thing to check when a device does not connect).")
    @Option(help: "Seconds to browse.") var timeout: Double = 3
    @Option(help: "The service type to browse for.") var type = ServiceAnnouncement.captureServiceType
    @Flag(help: "Print JSON for scripts.") var json = false

    func run() async throws {
        let services = try await ZeroconfBrowser.browse(type: type, timeout: timeout)
        if json {
            print(ControlOutput.json(services))
            return
        }
        guard !services.isEmpty else {
            print("no capture server announced within \(timeout) s (is avahi-daemon running on both hosts, and muevald without --no-zeroconf?)")
            return
        }
        var table = TextTable(["NAME", "HOST", "ADDRESSES", "PORT", "TXT"])
        for service in services {
            table.add([service.name, service.host, service.addresses.joined(separator: ","), String(service.port),
                       service.txt.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")])
        }
        print(table.render(), terminator: "")
    }
}

extension ExportFormat: ExpressibleByArgument {}

