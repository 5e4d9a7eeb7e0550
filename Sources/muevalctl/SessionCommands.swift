internal import ArgumentParser
internal import ControlProtocol
internal import SessionModel

// The commands on sessions: start, stop, list, note, delete.

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
    @OptionGroup var study: AssignmentOptions

    func run() async throws {
        let request = ControlRequest.StartSession(name: name, device: device, user: user, notes: notes, sensors: sensors?.commaSeparated ?? [],
                                                  pairing: pairingCode, assignment: study.assignment)
        try await global.call(request) { session in
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
        try await global.call(ControlRequest.StopSessions(session.map { .session($0) } ?? .all)) { sessions in
            sessions.isEmpty ? "no open session\n" : sessions.map { "stopped session \($0.id) (\($0.name)): \($0.events) events in \($0.path)\n" }.joined()
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
        try await global.call(ControlRequest.ListSessions(), human: ControlOutput.sessions)
    }
}

struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Every device that has connected.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await global.call(ControlRequest.ListDevices(), human: ControlOutput.devices)
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
        try global.show(stored: try await global.client.call(ControlRequest.AddNote(session: session, text: text, kind: kind)), as: "note")
    }
}

struct Delete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete a stopped session and its file.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Session id or name.") var session: String

    func run() async throws {
        try await global.call(ControlRequest.DeleteSession(session: session)) {
            "deleted session \($0.id) (\($0.name))\n"
        }
    }
}
