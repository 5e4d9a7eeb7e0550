internal import ArgumentParser
internal import BuildInfo
internal import DeviceSimulator
internal import Foundation
internal import MuEvalCapture
internal import MuEvalWire
internal import WireProtocol

/// muevalsim: simulated phones that play usability-test scenarios against muevald (docs/SIMULATOR.md).
@main
struct MuEvalSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "muevalsim",
        abstract: "Simulated phones that stream a usability test's events to muevald, found over Zeroconf or given with --connect.",
        discussion: "Built-in scenarios: \(BuiltinScenarios.names.joined(separator: ", ")). docs/SIMULATOR.md describes scenario files.",
        version: BuildInfo.versionLine(program: "muevalsim"))

    @Option(help: ArgumentHelp("The capture server, instead of finding it over Zeroconf.", valueName: "HOST:PORT"))
    var connect: String?

    @Option(help: ArgumentHelp("When several servers answer over Zeroconf, the one with this service name.", valueName: "NAME"))
    var server: String?

    @Option(help: ArgumentHelp("How long to browse for servers over Zeroconf.", valueName: "SECONDS"))
    var browseTimeout = 3.0

    @Option(help: ArgumentHelp("A built-in scenario or a scenario file.", valueName: "NAME|FILE"))
    var scenario = "wordpress"

    @Option(help: "Concurrent simulated devices, each with its own connection and identity.")
    var devices = 1

    @Option(help: ArgumentHelp("Events per second per device, or max; without it the scenario's own timing (see --speed).", valueName: "N|max"))
    var rate: Rate?

    @Option(help: ArgumentHelp("Time compression of the scenario's timing: 10 plays ten times faster.", valueName: "FACTOR"))
    var speed = 1.0

    @Option(help: ArgumentHelp("Stop after this many seconds; the scenario repeats until then.", valueName: "SECONDS"))
    var duration: Double?

    @Option(help: ArgumentHelp("Stop after this many events per device; the scenario repeats until then.", valueName: "N"))
    var events: Int?

    @Option(help: "Seed of every random choice: the same seed sends the same bytes (default: a random seed).")
    var seed: UInt64?

    @Option(help: ArgumentHelp("Device time at the start, in seconds since 1970 (default: now; with --seed: 2011-02-19T22:43:06Z, so that runs repeat byte for byte).", valueName: "SECONDS"))
    var startTime: Double?

    @Option(help: ArgumentHelp("Unacknowledged events a device keeps at most; when full the tester waits.", valueName: "EVENTS"))
    var buffer = 10_000

    @Option(help: ArgumentHelp("At the end, how long to wait for the last acknowledgements (with --invitation, also at the start for the server's welcome).", valueName: "SECONDS"))
    var ackTimeout = 30.0

    @Option(help: ArgumentHelp("Keep what the server has not acknowledged in DIR (the capture library's spool): the next run of the same devices delivers it first.",
                               valueName: "DIR"))
    var spool: String?

    @Flag(help: "Print the summary as JSON.")
    var json = false

    @Flag(help: "Print what device 1 would send (hello, events, goodbye) instead of connecting; needs no server.")
    var dryRun = false

    @Flag(help: "List the built-in scenarios and exit.")
    var listScenarios = false

    @Flag(help: "Connect with TLS (automatic when the server's Zeroconf TXT record says tls=1).") var tls = false
    @Option(help: ArgumentHelp("Trust the server certificates this PEM file's CAs signed, instead of the system's (with --connect, implies --tls).", valueName: "FILE"))
    var ca: String?
    @Option(help: ArgumentHelp("The server's device token or a session's pairing code, sent in <hello> (TXT auth=token or pairing).", valueName: "TOKEN"))
    var token: String?
    @Option(help: ArgumentHelp("A session's pairing code, sent in <hello> as pairing: beside --token when the server has a device token.", valueName: "CODE"))
    var pairingCode: String?

    @Option(help: ArgumentHelp("A study invitation's code, sent in <hello> as invitation: the tester plays the tasks the server sends, in its order, with their own task marks (one device).", valueName: "CODE"))
    var invitation: String?

    @Option(help: ArgumentHelp("Print a scenario as a scenario file (a starting point for your own) and exit.", valueName: "NAME|FILE"))
    var printScenario: String?

    @Option(help: ArgumentHelp("A task the participant tries and fails: about half its steps, a look elsewhere, then the task's end without its last steps (repeatable).", valueName: "TASK"))
    var failTask: [String] = []

    @Option(help: ArgumentHelp("A task the participant gives up on: like --fail-task, but the app never ends it (no end marker); the next task follows (repeatable).", valueName: "TASK"))
    var abandonTask: [String] = []

    @Option(help: ArgumentHelp("Per step, the probability (0-1) of a detour first: a view the task does not need, opened and left again, sometimes with a tap beside the controls.", valueName: "P"))
    var wander = 0.0

    @Option(help: ArgumentHelp("Per tap, the probability (0-1) of a tap where no control is just before it.", valueName: "P"))
    var misclickRate = 0.0

    @Option(help: ArgumentHelp("Multiplies the think time before each step: 2 is a participant who takes twice as long.", valueName: "FACTOR"))
    var thinkScale = 1.0

    @Flag(help: "The tester shakes the phone when a task fails or is abandoned: a burst of accelerometer samples (docs/REPORTS.md, \"Shakes\").")
    var shake = false

    @Flag(help: "The phone runs the capture library's frame-timing sensor: readings per view, some views janky (chosen by the seed).")
    var frameTiming = false

    @Flag(help: "The tester thinks aloud: the scenario's lines (and an exclamation when a task goes wrong) are spoken with espeak-ng and streamed as the microphone's audio.")
    var thinkAloud = false

    @Option(help: ArgumentHelp("espeak-ng's voice for --think-aloud (en-us+f2: the one the lab machine's recogniser hears best, docs/SPEECH.md).", valueName: "VOICE"))
    var voice = ThinkAloudOptions().voice

    @Option(help: ArgumentHelp("With --think-aloud, the microphone's format: wav (PCM) or aac (AAC in fragmented MP4, encoded by ffmpeg).", valueName: "FORMAT"))
    var audioFormat: AudioFormat = .wav

    @Flag(help: "With --think-aloud, also stream the front camera: a drawn face whose mouth moves while the tester speaks, H.264 in fragmented MP4 (encoded by ffmpeg), sent when the session selects faceCamera.")
    var faceVideo = false

    @Option(help: ArgumentHelp("With --think-aloud, append one JSON line per line said (device, stream, start, end, text; device time) to FILE.", valueName: "FILE"))
    var speechLog: String?

    @Option(help: ArgumentHelp("Seconds of audio per <media> chunk with --think-aloud.", valueName: "SECONDS"))
    var audioChunk = 1.0

    func validate() throws {
        guard !thinkAloud || rate == nil else { throw ValidationError("--think-aloud follows the scenario's own timing: leave out --rate") }
        guard thinkAloud || (!faceVideo && audioFormat == .wav) else { throw ValidationError("--face-video and --audio-format record the tester: add --think-aloud") }
        guard audioChunk > 0, audioChunk <= 10 else { throw ValidationError("--audio-chunk must be between 0 and 10 seconds") }
        guard devices >= 1 else { throw ValidationError("--devices must be at least 1") }
        guard invitation == nil || devices == 1 else {
            throw ValidationError("--invitation is one tester's, single use: it pairs one phone, so leave out --devices \(devices)")
        }
        guard invitation == nil || !dryRun else {
            throw ValidationError("--dry-run connects to no server, so --invitation would receive no tasks: leave one out")
        }
        guard speed > 0 else { throw ValidationError("--speed must be positive") }
        guard events.map({ $0 >= 1 }) ?? true else { throw ValidationError("--events must be at least 1") }
        guard duration.map({ $0 > 0 }) ?? true else { throw ValidationError("--duration must be positive") }
        guard buffer >= 1 else { throw ValidationError("--buffer must be at least 1") }
        guard !(dryRun && duration != nil) else { throw ValidationError("--dry-run plays one pass or --events N, not a --duration") }
        if case .perSecond(let value)? = rate, !(value > 0) { throw ValidationError("--rate must be positive, or max") }
    }

    func run() async throws {
        // ffmpeg encodes the recording through pipes: one that exits must not kill the run with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        if listScenarios {
            for name in BuiltinScenarios.names { print("\(name)\t\(BuiltinScenarios.named(name)?.description ?? "")") }
            return
        }
        if let printScenario {
            print(ScenarioLoader.encode(try ScenarioLoader.load(printScenario)))
            return
        }
        var options = SimulationOptions(scenario: try ScenarioLoader.load(scenario),
                                        epoch: startTime ?? (seed == nil ? Date().timeIntervalSince1970 : 1_298_155_386))
        options.behaviour.failedTasks = Set(failTask)
        options.behaviour.abandonedTasks = Set(abandonTask)
        options.behaviour.wander = wander
        options.behaviour.misclickRate = misclickRate
        options.behaviour.thinkScale = thinkScale
        options.behaviour.thinksAloud = thinkAloud
        options.behaviour.shakes = shake
        options.behaviour.frameTiming = frameTiming
        options.thinkAloud.voice = voice
        options.thinkAloud.speechLog = speechLog
        options.thinkAloud.chunkSeconds = audioChunk
        options.thinkAloud.audioFormat = audioFormat.mediaFormat
        options.thinkAloud.faceVideo = faceVideo
        do {
            try options.behaviour.validate(for: options.scenario)
        } catch {
            // The task names need the scenario, which is loaded here rather than in validate().
            throw ValidationError(error.description)
        }
        options.devices = devices
        options.pacing = switch rate {
        case .perSecond(let value)?: .rate(value)
        case .max?: .unlimited
        case nil: .scenario(speed: speed)
        }
        options.events = events
        options.duration = duration
        options.seed = seed ?? UInt64.random(in: 1...UInt64(UInt32.max))
        options.bufferCapacity = buffer
        options.ackTimeout = ackTimeout
        options.spoolDirectory = spool
        options.token = token
        options.pairingCode = pairingCode
        options.invitation = invitation
        options.welcomeTimeout = ackTimeout

        if dryRun {
            let planned = Simulation.plannedEvents(options, device: 0)
            let hello = Simulation.hello(options, device: 0)
            FileHandle.standardOutput.write(Data(hello + planned.flatMap(\.bytes) + Simulation.goodbye))
            return
        }
        let clientTLS = tls || ca != nil ? try ClientTLS(caFile: ca) : nil
        var target: ServerAddress
        if let connect {
            // --ca implies --tls with a given address.
            target = try ServerAddress(parsing: connect)
            target.tls = clientTLS != nil
        } else {
            // Found over Zeroconf once, before the run (a clear error at once rather than retries); TLS
            // when the TXT record asks for it or --tls, trusting --ca's CAs or the system's.
            target = try await ServerDiscovery.find(name: server, timeout: browseTimeout,
                                                    hasCredential: token != nil || pairingCode != nil || invitation != nil, alwaysTLS: tls)
        }
        let security: (any ConnectionSecurity)? = target.tls ? try clientTLS ?? ClientTLS() : nil
        let report = await Simulation.run(options, server: target, security: security)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(report.text)
        }
        // Scripts and CI learn from the status whether every event arrived.
        guard report.total.isComplete else { throw ExitCode(1) }
    }
}

enum Rate: ExpressibleByArgument {
    case perSecond(Double)
    case max

    init?(argument: String) {
        if argument == "max" {
            self = .max
        } else if let value = Double(argument) {
            self = .perSecond(value)
        } else {
            return nil
        }
    }
}

/// `--audio-format`.
enum AudioFormat: String, ExpressibleByArgument, CaseIterable {
    case wav, aac

    var mediaFormat: MediaFormat {
        switch self {
        case .wav: .wav
        case .aac: .aacMP4
        }
    }
}
