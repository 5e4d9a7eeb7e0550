public import CaptureServer
public import ConsoleServer
internal import ControlProtocol
public import Foundation
internal import JournalStorage
public import Logging
internal import SessionModel
internal import SpeechRecognition
public import TranscriptionService
public import SessionImport
public import Replication
internal import TOMLKit
internal import WireProtocol

/// Everything muevald runs with, after flags, environment and the config file are merged.
public struct DaemonConfiguration: Sendable {
    public var capture = CaptureConfiguration()
    public var dataDirectory = "./mueval-data"
    /// nil: `ControlSocketPath.daemonDefault`.
    public var controlSocket: String?
    /// A group whose members may use the control socket besides the daemon's user and root.
    public var controlGroup: String?
    /// The longest request line the control socket reads; a longer one is refused and its connection closed.
    public var controlMaxRequestBytes = ControlLimits.maxRequestBytes
    public var logLevel: Logger.Level = .info
    /// Log lines that may wait for stderr's reader; beyond, lines are dropped and counted.
    public var logQueueLines = 10_000
    public var zeroconf = ZeroconfSettings()
    public var console = ConsoleSettings()
    public var transcription = TranscriptionConfiguration()
    /// Limits of `muevalctl import` (docs/IMPORT.md).
    public var importLimits = ImportLimits()
    /// `storage.postgres.*`, kept whole whatever order its keys come in; in effect only with a URL.
    public var replication = ReplicationSettings(url: "")
    /// Replication into a shared PostgreSQL (docs/POSTGRES.md); nil: none.
    public var postgres: ReplicationSettings? { replication.url.isEmpty ? nil : replication }

    public init() {
        // Under systemd, StateDirectory= says where the data belongs.
        if let state = ProcessInfo.processInfo.environment["STATE_DIRECTORY"]?.split(separator: ":").first {
            dataDirectory = String(state)
        }
    }
}

/// How muevald announces itself on the network.
public struct ZeroconfSettings: Sendable, Equatable {
    public var enabled = true
    /// The instance name; nil: "muEval on HOSTNAME".
    public var name: String?
    /// Service types announced besides `_muEvaluationFramework-capture._tcp` (short aliases for strict browsers).
    public var extraTypes: [String] = []

    public init() {}
}

/// A config file, environment variable or flag that cannot be used; muevald exits with EX_CONFIG (78).
public struct ConfigurationError: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }

    public static let exitCode: Int32 = 78
}

/// One setting: its key in the config file (`section.name`), its environment variable, and how
/// to apply a value. The table below is the single list of settings; config/muevald.toml
/// documents each one.
struct ConfigurationOption: Sendable {
    enum Kind: Sendable {
        case string, integer, number, boolean
        /// A TOML array of strings; comma-separated in the environment.
        case stringList
        case choice([String])
        case hostPort

        var allowed: String {
            switch self {
            case .string: "a string"
            case .integer: "an integer"
            case .number: "a number"
            case .boolean: "true or false"
            case .stringList: "a list of strings"
            case .choice(let choices): "one of " + choices.map { "\"\($0)\"" }.joined(separator: ", ")
            case .hostPort: "\"HOST:PORT\" (port 0-65535; [::1]:PORT for IPv6)"
            }
        }
    }

    let key: String
    let kind: Kind
    /// Whether SIGHUP can apply a change without a restart.
    var reloadable = false
    /// Shorter environment variables that users know from elsewhere (`MUEVAL_SOCKET`, shared with muevalctl).
    var aliases: [String] = []
    /// The value in effect, as the text `apply` reads (for `--check-config` and reloads).
    let current: @Sendable (DaemonConfiguration) -> String
    let apply: @Sendable (String, inout DaemonConfiguration) -> Bool

    /// `MUEVAL_SERVER_LISTEN` for `server.listen`, then the aliases.
    var environmentVariables: [String] { ["MUEVAL_" + key.uppercased().replacingOccurrences(of: ".", with: "_")] + aliases }

    static let all: [ConfigurationOption] = [
        .init(key: "server.listen", kind: .hostPort, current: { HostPort.text(host: $0.capture.host, port: $0.capture.port) }) { value, config in
            guard let address = HostPort(parsing: value) else { return false }
            config.capture.host = address.host.isEmpty ? "0.0.0.0" : address.host
            config.capture.port = address.port
            return true
        },
        .init(key: "server.tls_certificate", kind: .string, current: { $0.capture.tls?.certificate ?? "" }) { value, config in
            config.capture.tls = tlsFiles(config.capture.tls) { $0.certificate = value }
            return true
        },
        .init(key: "server.tls_key", kind: .string, current: { $0.capture.tls?.key ?? "" }) { value, config in
            config.capture.tls = tlsFiles(config.capture.tls) { $0.key = value }
            return true
        },
        .init(key: "server.tls_client_ca", kind: .string, current: { $0.capture.tls?.clientCA ?? "" }) { value, config in
            config.capture.tls = tlsFiles(config.capture.tls) { $0.clientCA = value.isEmpty ? nil : value }
            return true
        },
        .init(key: "server.tls_listen", kind: .hostPort,
              current: { $0.capture.tlsListen.map { HostPort.text(host: $0.host, port: $0.port) } ?? "" }) { value, config in
            if value.isEmpty {
                config.capture.tlsListen = nil
                return true
            }
            guard let address = HostPort(parsing: value) else { return false }
            config.capture.tlsListen = (address.host.isEmpty ? "0.0.0.0" : address.host, address.port)
            return true
        },
        .init(key: "server.unknown_device_policy", kind: .choice(UnknownDevicePolicy.allCases.map(\.rawValue)),
              current: { $0.capture.unknownDevicePolicy.rawValue }) { value, config in
            guard let policy = UnknownDevicePolicy(rawValue: value) else { return false }
            config.capture.unknownDevicePolicy = policy
            return true
        },
        .init(key: "server.max_connections", kind: .integer, reloadable: true, current: { String($0.capture.maxConnections) }) { value, config in
            positive(value).map { config.capture.maxConnections = $0 } != nil
        },
        .init(key: "server.max_connections_per_address", kind: .integer, reloadable: true,
              current: { String($0.capture.maxConnectionsPerAddress) }) { value, config in
            positive(value).map { config.capture.maxConnectionsPerAddress = $0 } != nil
        },
        .init(key: "server.max_partial_bytes", kind: .integer,
              current: { String($0.capture.maxPartialBytes) }) { value, config in
            positive(value).map { config.capture.maxPartialBytes = $0 } != nil
        },
        .init(key: "server.device_token", kind: .string, reloadable: true, current: { $0.capture.deviceToken ?? "" }) { value, config in
            config.capture.deviceToken = value.isEmpty ? nil : value
            return true
        },
        .init(key: "server.pairing_backoff_after", kind: .integer, reloadable: true,
              current: { String($0.capture.pairing.backoffAfter) }) { value, config in
            positive(value).map { config.capture.pairing.backoffAfter = $0 } != nil
        },
        .init(key: "server.pairing_backoff_seconds", kind: .number, reloadable: true,
              current: { String($0.capture.pairing.backoffSeconds) }) { value, config in
            guard let seconds = Double(value), seconds > 0, seconds <= 86_400 else { return false }
            config.capture.pairing.backoffSeconds = seconds
            return true
        },
        .init(key: "server.pairing_lockout_after", kind: .integer, reloadable: true,
              current: { String($0.capture.pairing.lockoutAfter) }) { value, config in
            positive(value).map { config.capture.pairing.lockoutAfter = $0 } != nil
        },
        .init(key: "server.pairing_lockout_seconds", kind: .number, reloadable: true,
              current: { String($0.capture.pairing.lockoutSeconds) }) { value, config in
            guard let seconds = Double(value), seconds > 0, seconds <= 7 * 86_400 else { return false }
            config.capture.pairing.lockoutSeconds = seconds
            return true
        },
        .init(key: "server.pairing_rotate_after", kind: .integer, reloadable: true,
              current: { String($0.capture.pairing.rotateAfter) }) { value, config in
            guard let count = Int(value), count >= 0 else { return false }
            config.capture.pairing.rotateAfter = count
            return true
        },
        .init(key: "server.pairing_tracked_addresses", kind: .integer, reloadable: true,
              current: { String($0.capture.pairing.trackedAddresses) }) { value, config in
            positive(value).map { config.capture.pairing.trackedAddresses = $0 } != nil
        },
        .init(key: "server.idle_timeout", kind: .number, reloadable: true, current: { String($0.capture.idleTimeout) }) { value, config in
            // At most a day: `inf` or 1e300 would overflow the idle timer's nanoseconds.
            guard let seconds = Double(value), seconds >= 0, seconds <= 86_400 else { return false }
            config.capture.idleTimeout = seconds
            return true
        },
        .init(key: "limits.max_message_bytes", kind: .integer, reloadable: true,
              current: { String($0.capture.wireLimits.maxMessageBytes) }) { value, config in
            positive(value).map { config.capture.wireLimits.maxMessageBytes = $0 } != nil
        },
        .init(key: "limits.max_nesting_depth", kind: .integer, reloadable: true,
              current: { String($0.capture.wireLimits.maxDepth) }) { value, config in
            positive(value).map { config.capture.wireLimits.maxDepth = $0 } != nil
        },
        .init(key: "limits.max_media_chunk_bytes", kind: .integer, reloadable: true,
              current: { String($0.capture.wireLimits.maxMediaChunkBytes) }) { value, config in
            positive(value).map { config.capture.wireLimits.maxMediaChunkBytes = $0 } != nil
        },
        .init(key: "limits.max_media_bytes_per_session", kind: .integer,
              current: { String($0.capture.maxMediaBytes) }) { value, config in
            positive(value).map { config.capture.maxMediaBytes = $0 } != nil
        },
        .init(key: "limits.earliest_timestamp", kind: .string, reloadable: true,
              current: { ISO8601.string($0.capture.wireLimits.valueRanges.times.lowerBound) }) { value, config in
            let times = config.capture.wireLimits.valueRanges.times
            guard let time = ISO8601.parse(value), let window = ClosedRange.checked(time, times.upperBound) else { return false }
            config.capture.wireLimits.valueRanges.times = window
            return true
        },
        .init(key: "limits.latest_timestamp", kind: .string, reloadable: true,
              current: { ISO8601.string($0.capture.wireLimits.valueRanges.times.upperBound) }) { value, config in
            let times = config.capture.wireLimits.valueRanges.times
            guard let time = ISO8601.parse(value), let window = ClosedRange.checked(times.lowerBound, time) else { return false }
            config.capture.wireLimits.valueRanges.times = window
            return true
        },
        .init(key: "limits.max_coordinate", kind: .number, reloadable: true,
              current: { String($0.capture.wireLimits.valueRanges.maxCoordinate) }) { value, config in
            guard let points = Double(value), points > 0, points.isFinite else { return false }
            config.capture.wireLimits.valueRanges.maxCoordinate = points
            return true
        },
        .init(key: "limits.max_duration", kind: .number, reloadable: true,
              current: { String($0.capture.wireLimits.valueRanges.maxDuration) }) { value, config in
            guard let seconds = Double(value), seconds > 0, seconds.isFinite else { return false }
            config.capture.wireLimits.valueRanges.maxDuration = seconds
            return true
        },
        .init(key: "limits.max_media_part", kind: .integer, reloadable: true,
              current: { String($0.capture.wireLimits.valueRanges.maxMediaPart) }) { value, config in
            positive(value).map { config.capture.wireLimits.valueRanges.maxMediaPart = Int64($0) } != nil
        },
        .init(key: "limits.tail_buffer", kind: .integer, reloadable: true, current: { String($0.capture.tailBuffer) }) { value, config in
            positive(value).map { config.capture.tailBuffer = $0 } != nil
        },
        .init(key: "storage.data_directory", kind: .string, current: { $0.dataDirectory }) { value, config in
            guard !value.isEmpty else { return false }
            config.dataDirectory = value
            return true
        },
        .init(key: "storage.synchronous", kind: .choice(JournalSynchronous.allCases.map(\.rawValue)),
              current: { $0.capture.journal.synchronous.rawValue }) { value, config in
            guard let mode = JournalSynchronous(rawValue: value) else { return false }
            config.capture.journal.synchronous = mode
            return true
        },
        .init(key: "storage.max_pending_bytes", kind: .integer, current: { String($0.capture.journal.maxPendingBytes) }) { value, config in
            positive(value).map { config.capture.journal.maxPendingBytes = $0 } != nil
        },
        .init(key: "storage.commit_delay_ms", kind: .integer,
              current: { String(Int($0.capture.journal.commitDelay / .milliseconds(1))) }) { value, config in
            guard let milliseconds = Int(value), (0...1000).contains(milliseconds) else { return false }
            config.capture.journal.commitDelay = .milliseconds(milliseconds)
            return true
        },
        .init(key: "control.socket", kind: .string, aliases: ["MUEVAL_SOCKET"], current: { $0.controlSocket ?? "" }) { value, config in
            config.controlSocket = value.isEmpty ? nil : value
            return true
        },
        .init(key: "control.max_request_bytes", kind: .integer,
              current: { String($0.controlMaxRequestBytes) }) { value, config in
            positive(value).map { config.controlMaxRequestBytes = $0 } != nil
        },
        .init(key: "control.group", kind: .string, current: { $0.controlGroup ?? "" }) { value, config in
            config.controlGroup = value.isEmpty ? nil : value
            return true
        },
        .init(key: "zeroconf.enabled", kind: .boolean, current: { String($0.zeroconf.enabled) }) { value, config in
            guard let enabled = Bool(value) else { return false }
            config.zeroconf.enabled = enabled
            return true
        },
        .init(key: "zeroconf.name", kind: .string, reloadable: true, current: { $0.zeroconf.name ?? "" }) { value, config in
            config.zeroconf.name = value.isEmpty ? nil : value
            return true
        },
        .init(key: "zeroconf.types", kind: .stringList, current: { $0.zeroconf.extraTypes.joined(separator: ",") }) { value, config in
            let types = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard types.allSatisfy({ $0.hasPrefix("_") && ($0.hasSuffix("._tcp")) }) else { return false }
            config.zeroconf.extraTypes = types
            return true
        },
        .init(key: "transcription.enabled", kind: .boolean, current: { String($0.transcription.enabled) }) { value, config in
            guard let enabled = Bool(value) else { return false }
            config.transcription.enabled = enabled
            return true
        },
        .init(key: "transcription.acoustic_model", kind: .string, current: { $0.transcription.speech.acousticModel }) { value, config in
            guard !value.isEmpty else { return false }
            config.transcription.speech.acousticModel = value
            return true
        },
        .init(key: "transcription.language_model", kind: .string, current: { $0.transcription.speech.languageModel }) { value, config in
            guard !value.isEmpty else { return false }
            config.transcription.speech.languageModel = value
            return true
        },
        .init(key: "transcription.dictionary", kind: .string, current: { $0.transcription.speech.dictionary }) { value, config in
            guard !value.isEmpty else { return false }
            config.transcription.speech.dictionary = value
            return true
        },
        .init(key: "transcription.exclamations", kind: .stringList,
              current: { $0.transcription.speech.exclamations.map(ExclamationPhrase.configText).joined(separator: ",") }) { value, config in
            let phrases = value.split(separator: ",").compactMap { ExclamationPhrase(configText: String($0)) }
            guard !phrases.isEmpty else { return false }
            config.transcription.speech.exclamations = phrases
            return true
        },
        .init(key: "transcription.workers", kind: .integer, current: { String($0.transcription.speech.workers) }) { value, config in
            positive(value).map { config.transcription.speech.workers = $0 } != nil
        },
        .init(key: "transcription.max_queued", kind: .integer, current: { String($0.transcription.maxQueued) }) { value, config in
            positive(value).map { config.transcription.maxQueued = $0 } != nil
        },
        .init(key: "storage.postgres.url", kind: .string, current: { $0.replication.url }) { value, config in
            config.replication.url = value
            return true
        },
        .init(key: "storage.postgres.password_file", kind: .string, current: { $0.replication.passwordFile ?? "" }) { value, config in
            config.replication.passwordFile = value.isEmpty ? nil : value
            return true
        },
        .init(key: "storage.postgres.lab", kind: .string, current: { $0.replication.lab }) { value, config in
            config.replication.lab = value.isEmpty ? ReplicationSettings.defaultLab : value
            return true
        },
        .init(key: "storage.postgres.batch_events", kind: .integer, current: { String($0.replication.batchEvents) }) { value, config in
            positive(value).map { config.replication.batchEvents = $0 } != nil
        },
        .init(key: "storage.postgres.interval", kind: .number, current: { String($0.replication.interval) }) { value, config in
            guard let seconds = Double(value), seconds > 0, seconds <= 3600 else { return false }
            config.replication.interval = seconds
            return true
        },
        .init(key: "storage.postgres.timeout", kind: .number, current: { String($0.replication.timeout) }) { value, config in
            guard let seconds = Double(value), seconds >= 1, seconds <= 3600 else { return false }
            config.replication.timeout = seconds
            return true
        },
        .init(key: "import.max_file_bytes", kind: .integer, current: { String($0.importLimits.maxFileBytes) }) { value, config in
            positive(value).map { config.importLimits.maxFileBytes = Int64($0) } != nil
        },
        .init(key: "import.max_events", kind: .integer, current: { String($0.importLimits.maxEvents) }) { value, config in
            positive(value).map { config.importLimits.maxEvents = Int64($0) } != nil
        },
        .init(key: "import.max_time_regression", kind: .number, current: { String($0.importLimits.maxTimeRegression) }) { value, config in
            guard let seconds = Double(value), seconds >= 0, seconds.isFinite else { return false }
            config.importLimits.maxTimeRegression = seconds
            return true
        },
        .init(key: "console.enabled", kind: .boolean, current: { String($0.console.enabled) }) { value, config in
            guard let enabled = Bool(value) else { return false }
            config.console.enabled = enabled
            return true
        },
        .init(key: "console.listen", kind: .hostPort, current: { HostPort.text(host: $0.console.host, port: $0.console.port) }) { value, config in
            guard let address = HostPort(parsing: value), !address.host.isEmpty else { return false }
            config.console.host = address.host
            config.console.port = address.port
            return true
        },
        .init(key: "console.public_url", kind: .string, current: { $0.console.publicURL ?? "" }) { value, config in
            guard value.isEmpty || value.hasPrefix("http://") || value.hasPrefix("https://") else { return false }
            config.console.publicURL = value.isEmpty ? nil : value
            return true
        },
        .init(key: "console.allowed_hosts", kind: .stringList, current: { $0.console.allowedHosts.joined(separator: ",") }) { value, config in
            let names = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard names.allSatisfy({ !$0.contains("/") && !$0.contains("@") && !$0.contains(" ") }) else { return false }
            config.console.allowedHosts = names
            return true
        },
        .init(key: "console.allow_plaintext", kind: .boolean, current: { String($0.console.allowPlaintext) }) { value, config in
            guard let allowed = Bool(value) else { return false }
            config.console.allowPlaintext = allowed
            return true
        },
        .init(key: "console.tls_certificate", kind: .string, current: { $0.console.tlsCertificate ?? "" }) { value, config in
            config.console.tlsCertificate = value.isEmpty ? nil : value
            return true
        },
        .init(key: "console.tls_key", kind: .string, current: { $0.console.tlsKey ?? "" }) { value, config in
            config.console.tlsKey = value.isEmpty ? nil : value
            return true
        },
        .init(key: "console.login_code_seconds", kind: .number, current: { String($0.console.access.loginCodeSeconds) }) { value, config in
            guard let seconds = Double(value), seconds > 0 else { return false }
            config.console.access.loginCodeSeconds = seconds
            return true
        },
        .init(key: "console.session_hours", kind: .number, current: { String($0.console.access.sessionSeconds / 3600) }) { value, config in
            guard let hours = Double(value), hours > 0 else { return false }
            config.console.access.sessionSeconds = hours * 3600
            return true
        },
        .init(key: "console.live_buffer", kind: .integer, current: { String($0.console.liveBuffer) }) { value, config in
            positive(value).map { config.console.liveBuffer = $0 } != nil
        },
        .init(key: "console.max_body_bytes", kind: .integer, current: { String($0.console.maxBodyBytes) }) { value, config in
            positive(value).map { config.console.maxBodyBytes = $0 } != nil
        },
        .init(key: "console.report_configurations", kind: .string, current: { $0.console.reportConfigurations ?? "" }) { value, config in
            config.console.reportConfigurations = value.isEmpty ? nil : value
            return true
        },
        .init(key: "log.level", kind: .choice(Logger.Level.allCases.map(\.rawValue)), reloadable: true,
              current: { $0.logLevel.rawValue }) { value, config in
            guard let level = Logger.Level(rawValue: value) else { return false }
            config.logLevel = level
            return true
        },
        .init(key: "log.queue_lines", kind: .integer, reloadable: true, current: { String($0.logQueueLines) }) { value, config in
            positive(value).map { config.logQueueLines = $0 } != nil
        },
    ]

    static func named(_ key: String) -> ConfigurationOption? {
        all.first { $0.key == key }
    }
}

extension DaemonConfiguration {
    /// The effective configuration as a TOML file that muevald reads back (`muevald --check-config`),
    /// written by TOMLKit so that any value (quotes, newlines, control characters) stays valid TOML.
    public var rendered: String {
        let document = TOMLTable()
        for option in ConfigurationOption.all {
            let parts = option.key.split(separator: ".", maxSplits: 1).map(String.init)
            let section = document[parts[0]]?.table ?? TOMLTable()
            let value = option.current(self)
            let typed: TOMLValueConvertible = switch option.kind {
            case .integer: Int(value) ?? 0
            case .number: Double(value) ?? 0
            case .boolean: value == "true"
            case .stringList: TOMLArray(value.split(separator: ",").map(String.init))
            case .string, .choice, .hostPort: value
            }
            section[parts[1]] = typed
            document[parts[0]] = section
        }
        // Basic "…" strings on one line, as config/muevald.toml writes them.
        return document.convert(to: .toml, options: [.allowUnicodeStrings, .indentations]) + "\n"
    }

    /// This configuration with what a reload may change taken from `new`; and the settings that
    /// differ, split into those applied and those that need a restart.
    func reloaded(from new: DaemonConfiguration) -> (configuration: DaemonConfiguration, applied: [String], needRestart: [String]) {
        var result = self
        var applied: [String] = []
        var needRestart: [String] = []
        for option in ConfigurationOption.all where option.current(new) != option.current(self) {
            if option.reloadable, option.apply(option.current(new), &result) {
                applied.append(option.key)
            } else {
                needRestart.append(option.key)
            }
        }
        return (result, applied, needRestart)
    }
}

/// Where the configuration comes from, kept so that SIGHUP can read it again.
public struct ConfigurationSource: Sendable {
    public var file: String?
    /// Settings from the command line, by config key.
    public var flags: [String: String]

    public init(file: String?, flags: [String: String]) {
        self.file = file
        self.flags = flags
    }

    public func load(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> DaemonConfiguration {
        try ConfigurationLoader(environment: environment).load(file: file, flags: flags)
    }
}

/// The TLS files with one of them changed; nil once none is set (plaintext).
private func tlsFiles(_ current: CaptureTLSFiles?, _ change: (inout CaptureTLSFiles) -> Void) -> CaptureTLSFiles? {
    var files = current ?? CaptureTLSFiles(certificate: "", key: "")
    change(&files)
    return files.certificate.isEmpty && files.key.isEmpty && files.clientCA == nil ? nil : files
}

private func positive(_ value: String) -> Int? {
    guard let number = Int(value), number > 0 else { return nil }
    return number
}
