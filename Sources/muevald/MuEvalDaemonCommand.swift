internal import ArgumentParser
internal import BuildInfo
internal import Daemon
internal import Foundation
internal import Logging

/// muevald: the muEval capture server. Everything but argument parsing lives in the Daemon module.
@main
struct MuEvalDaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "muevald",
        abstract: "The muEval capture server: records usability events streamed by devices under test.",
        discussion: "Settings come from flags, then MUEVAL_* environment variables, then the config file, then defaults (config/muevald.toml lists them all).",
        version: BuildInfo.versionLine(program: "muevald"))

    @Option(name: .long, help: ArgumentHelp("A TOML config file.", valueName: "FILE"))
    var config: String?

    @Option(name: .customLong("data-dir"), help: ArgumentHelp("Where the catalog and session files live (default ./mueval-data).", valueName: "DIR"))
    var dataDirectory: String?

    @Option(name: .long, help: ArgumentHelp("Address devices connect to (default 0.0.0.0:28021).", valueName: "HOST:PORT"))
    var listen: String?

    @Option(name: .customLong("console-listen"), help: ArgumentHelp("Address of the web console (default 127.0.0.1:28080).", valueName: "HOST:PORT"))
    var consoleListen: String?

    @Flag(name: .customLong("no-console"), help: "Do not serve the web console.")
    var noConsole = false

    @Option(name: .long, help: ArgumentHelp("The control socket muevalctl talks to.", valueName: "PATH"))
    var socket: String?

    @Option(name: .customLong("unknown-devices"), help: ArgumentHelp("What to do with devices no session waits for: reject or auto.", valueName: "POLICY"))
    var unknownDevicePolicy: String?

    @Option(name: .customLong("web-origin"), help: ArgumentHelp("An origin whose pages may capture over the WebSocket at /capture (repeatable; capture.web_origins).", valueName: "ORIGIN"))
    var webOrigins: [String] = []

    @Flag(name: .customLong("web-open"), help: "Let web devices record without an invitation or a pairing code (capture.web_require_code = false).")
    var webOpen = false

    @Option(name: .customLong("web-listen"), help: ArgumentHelp("An address of its own for web capture, e.g. when the console is off (capture.web_listen).", valueName: "HOST:PORT"))
    var webListen: String?

    @Flag(name: .customLong("no-zeroconf"), help: "Do not announce the service over Zeroconf (Avahi).")
    var noZeroconf = false

    @Flag(name: .customLong("check-config"), help: "Check the configuration, print the effective settings as TOML, and exit (status 78 when invalid).")
    var checkConfig = false

    @Option(name: .customLong("log-level"), help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "LEVEL"))
    var logLevel: String?

    /// For muevald.toml(5), which packaging/man/muevald-toml.py writes from it (docs/PACKAGING.md).
    @Flag(name: .customLong("configuration-reference"), help: .hidden)
    var configurationReference = false

    func run() async throws {
        if configurationReference {
            FileHandle.standardOutput.write(try ConfigurationReference.json())
            return
        }
        var flags: [String: String] = [:]
        flags["storage.data_directory"] = dataDirectory
        flags["server.listen"] = listen
        flags["control.socket"] = socket
        flags["server.unknown_device_policy"] = unknownDevicePolicy
        flags["log.level"] = logLevel
        if noZeroconf { flags["zeroconf.enabled"] = "false" }
        flags["console.listen"] = consoleListen
        if noConsole { flags["console.enabled"] = "false" }
        if !webOrigins.isEmpty { flags["capture.web_origins"] = webOrigins.joined(separator: ",") }
        if webOpen { flags["capture.web_require_code"] = "false" }
        flags["capture.web_listen"] = webListen
        let source = ConfigurationSource(file: config, flags: flags)
        let configuration: DaemonConfiguration
        do {
            configuration = try source.load()
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("muevald: \(error)\n".utf8))
            throw ExitCode(ConfigurationError.exitCode)
        }
        if checkConfig {
            print("# muevald: the configuration is valid; in effect:\n" + configuration.rendered, terminator: "")
            return
        }
        let logLevel = LogLevelSetting(configuration.logLevel)
        StderrLogHandler.setQueueLimit(configuration.logQueueLines)
        LoggingSystem.bootstrap { StderrLogHandler(label: $0, level: logLevel) }
        defer { StderrLogHandler.flush() }
        do {
            try await MuEvalDaemon(configuration: configuration, source: source, logLevel: logLevel).run()
        } catch {
            Logger(label: "muevald").critical("\(error)")
            throw ExitCode.failure
        }
    }
}
