internal import CaptureServer
internal import ConsoleServer
internal import ControlProtocol
internal import FaceAnalysis
internal import Foundation
internal import JournalStorage
internal import Logging
internal import MuEvalWire
internal import SessionCore
internal import SessionModel
internal import SessionReports
internal import SpeechRecognition
internal import TesterPool
internal import TranscriptionService
internal import SessionImport
internal import ReplicationArchive
internal import WireProtocol

/// The single list of settings (config/muevald.toml documents each one); `ConfigurationOption` says
/// how one is read, shown and reloaded.
extension ConfigurationOption {
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
        .positive("server.max_connections", \.capture.maxConnections, reloadable: true),
        .positive("server.max_connections_per_address", \.capture.maxConnectionsPerAddress, reloadable: true),
        .positive("server.max_partial_bytes", \.capture.maxPartialBytes),
        .optionalText("server.device_token", \.capture.deviceToken, reloadable: true),
        .positive("server.pairing_backoff_after", \.capture.pairing.backoffAfter, reloadable: true),
        .number("server.pairing_backoff_seconds", \.capture.pairing.backoffSeconds, reloadable: true) { $0 > 0 && $0 <= 86_400 },
        .positive("server.pairing_lockout_after", \.capture.pairing.lockoutAfter, reloadable: true),
        .number("server.pairing_lockout_seconds", \.capture.pairing.lockoutSeconds, reloadable: true) { $0 > 0 && $0 <= 7 * 86_400 },
        .init(key: "server.pairing_rotate_after", kind: .integer, reloadable: true,
              current: { String($0.capture.pairing.rotateAfter) }) { value, config in
            guard let count = Int(value), count >= 0 else { return false }
            config.capture.pairing.rotateAfter = count
            return true
        },
        .positive("server.pairing_tracked_addresses", \.capture.pairing.trackedAddresses, reloadable: true),
        .init(key: "server.pairing_network_factor", kind: .integer, current: { String($0.capture.pairing.networkFactor) }) { value, config in
            // One factor for the pairing guard and the visitor quotas: a /48 is one site for both.
            guard let factor = Int(value), factor > 0 else { return false }
            config.capture.pairing.networkFactor = factor
            config.console.visitors.networkFactor = factor
            return true
        },
        // At most a day: `inf` or 1e300 would overflow the idle timer's nanoseconds.
        .number("server.idle_timeout", \.capture.idleTimeout, reloadable: true) { $0 >= 0 && $0 <= 86_400 },
        .number("server.hello_timeout", \.capture.helloTimeout, reloadable: true) { $0 >= 0 && $0 <= 86_400 },
        .init(key: "capture.web_origins", kind: .stringList, reloadable: true, current: { $0.capture.web.origins.joined(separator: ",") }) { value, config in
            let origins = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            // What a browser sends as `Origin`: scheme://host[:port], no path (capacitor://localhost for a Capacitor app on iOS).
            guard origins.allSatisfy({ $0.range(of: #"^[a-z][a-z0-9+.-]*://[^/\s?#@]+$"#, options: .regularExpression) != nil }) else { return false }
            config.capture.web.origins = origins
            return true
        },
        .init(key: "capture.web_require_code", kind: .boolean, reloadable: true, current: { String($0.capture.web.requireCode) }) { value, config in
            guard let flag = Bool(value) else { return false }
            config.capture.web.requireCode = flag
            return true
        },
        .init(key: "capture.web_listen", kind: .hostPort,
              current: { $0.capture.web.listen.map { HostPort.text(host: $0.host, port: $0.port) } ?? "" }) { value, config in
            if value.isEmpty {
                config.capture.web.listen = nil
                return true
            }
            guard let address = HostPort(parsing: value) else { return false }
            config.capture.web.listen = (address.host.isEmpty ? "0.0.0.0" : address.host, address.port)
            return true
        },
        .positive("capture.web_max_per_address", \.capture.web.limits.maxPerAddress, reloadable: true),
        .positive("capture.web_connections_per_minute", \.capture.web.limits.connectionsPerMinute, reloadable: true),
        // NIO's frame decoder traps above UInt32.max; a frame held whole is bounded far below that.
        .init(key: "capture.web_max_frame_bytes", kind: .integer, current: { String($0.capture.web.maxFrameBytes) }) { value, config in
            guard let bytes = Int(value), (WebCaptureSettings.frameBytesRange).contains(bytes) else { return false }
            config.capture.web.maxFrameBytes = bytes
            return true
        },
        .number("capture.reconnect_grace", \.reconnectGrace, reloadable: true) { $0 >= 0 && $0 <= 86_400 },
        .positive("limits.descriptor_reserve", \.descriptorReserve),
        .positive("limits.max_message_bytes", \.capture.wireLimits.maxMessageBytes, reloadable: true),
        .positive("limits.max_nesting_depth", \.capture.wireLimits.maxDepth, reloadable: true),
        .positive("limits.max_media_chunk_bytes", \.capture.wireLimits.maxMediaChunkBytes, reloadable: true),
        .positive("limits.max_media_bytes_per_session", \.capture.maxMediaBytes),
        .init(key: "limits.earliest_timestamp", kind: .string, reloadable: true,
              current: { DateText.canonical($0.capture.wireLimits.valueRanges.times.lowerBound) }) { value, config in
            let times = config.capture.wireLimits.valueRanges.times
            guard let time = ISO8601.parse(value), let window = ClosedRange.checked(time, times.upperBound) else { return false }
            config.capture.wireLimits.valueRanges.times = window
            return true
        },
        .init(key: "limits.latest_timestamp", kind: .string, reloadable: true,
              current: { DateText.canonical($0.capture.wireLimits.valueRanges.times.upperBound) }) { value, config in
            let times = config.capture.wireLimits.valueRanges.times
            guard let time = ISO8601.parse(value), let window = ClosedRange.checked(times.lowerBound, time) else { return false }
            config.capture.wireLimits.valueRanges.times = window
            return true
        },
        .number("limits.max_coordinate", \.capture.wireLimits.valueRanges.maxCoordinate, reloadable: true) { $0 > 0 && $0.isFinite },
        .number("limits.max_duration", \.capture.wireLimits.valueRanges.maxDuration, reloadable: true) { $0 > 0 && $0.isFinite },
        .positive("limits.max_media_part", \.capture.wireLimits.valueRanges.maxMediaPart, reloadable: true),
        .positive("limits.tail_buffer", \.capture.tailBuffer, reloadable: true),
        .positive("limits.lifecycle_buffer", \.lifecycleBuffer),
        .text("storage.data_directory", \.dataDirectory),
        .init(key: "storage.synchronous", kind: .choice(JournalSynchronous.allCases.map(\.rawValue)),
              current: { $0.capture.journal.synchronous.rawValue }) { value, config in
            guard let mode = JournalSynchronous(rawValue: value) else { return false }
            config.capture.journal.synchronous = mode
            return true
        },
        .flag("storage.shared_sync", \.sharedSync),
        .init(key: "replay.remote_assets", kind: .choice(PageRemoteAssets.allCases.map(\.rawValue)),
              current: { $0.console.replayRemoteAssets.rawValue }) { value, config in
            guard let policy = PageRemoteAssets(rawValue: value) else { return false }
            config.console.replayRemoteAssets = policy
            return true
        },
        .positive("replay.page_cache_mib", \.console.replayPageCacheMiB, maximum: 65_536),
        .positive("storage.max_pending_bytes", \.capture.journal.maxPendingBytes),
        // SQLite multiplies it by 1,024 in 64 bits: a larger value would overflow there (4 GiB is far above any use).
        .positive("storage.cache_kib", \.capture.journal.cacheKiB, maximum: 1 << 22),
        .init(key: "storage.commit_delay_ms", kind: .integer,
              current: { String(Int($0.capture.journal.commitDelay / .milliseconds(1))) }) { value, config in
            guard let milliseconds = Int(value), (0...1000).contains(milliseconds) else { return false }
            config.capture.journal.commitDelay = .milliseconds(milliseconds)
            return true
        },
        .optionalText("control.socket", \.controlSocket, aliases: ["MUEVAL_SOCKET"]),
        .positive("control.max_request_bytes", \.controlMaxRequestBytes),
        .optionalText("control.group", \.controlGroup),
        .flag("zeroconf.enabled", \.zeroconf.enabled),
        .optionalText("zeroconf.name", \.zeroconf.name, reloadable: true),
        .init(key: "zeroconf.types", kind: .stringList, current: { $0.zeroconf.extraTypes.joined(separator: ",") }) { value, config in
            let types = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard types.allSatisfy({ $0.hasPrefix("_") && ($0.hasSuffix("._tcp")) }) else { return false }
            config.zeroconf.extraTypes = types
            return true
        },
        .flag("transcription.enabled", \.transcription.enabled),
        .text("transcription.acoustic_model", \.transcription.speech.acousticModel),
        .text("transcription.language_model", \.transcription.speech.languageModel),
        .text("transcription.dictionary", \.transcription.speech.dictionary),
        .init(key: "transcription.exclamations", kind: .stringList,
              current: { $0.transcription.speech.exclamations.map(ExclamationPhrase.configText).joined(separator: ",") }) { value, config in
            let phrases = value.split(separator: ",").compactMap { ExclamationPhrase(configText: String($0)) }
            guard !phrases.isEmpty else { return false }
            config.transcription.speech.exclamations = phrases
            return true
        },
        .init(key: "transcription.workers", kind: .integer, current: { String($0.transcription.speech.workers) }) { value, config in
            guard let workers = Int(value), SpeechConfiguration.workerRange.contains(workers) else { return false }
            config.transcription.speech.workers = workers
            return true
        },
        .init(key: "transcription.vocabulary", kind: .integer, current: { String($0.transcription.speech.vocabulary) }) { value, config in
            guard let words = Int(value), words >= 0 else { return false }
            config.transcription.speech.vocabulary = words
            return true
        },
        .init(key: "transcription.words", kind: .stringList, current: { $0.transcription.speech.words.joined(separator: ",") }) { value, config in
            let words = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
            guard words.allSatisfy({ !$0.contains(where: \.isWhitespace) }) else { return false }
            config.transcription.speech.words = words
            return true
        },
        .positive("transcription.max_queued", \.transcription.maxQueued),
        .init(key: "transcription.engine", kind: .choice(SpeechEngine.allCases.map(\.rawValue)),
              current: { $0.transcription.engine.rawValue }) { value, config in
            guard let engine = SpeechEngine(rawValue: value) else { return false }
            config.transcription.engine = engine
            return true
        },
        .init(key: "transcription.language", kind: .string, current: { $0.transcription.whisper.language }) { value, config in
            guard WhisperConfiguration.isLanguage(value) else { return false }
            config.transcription.whisper.language = value
            return true
        },
        .optionalText("transcription.speech_directory", \.transcription.whisper.directory),
        .optionalText("transcription.model", \.transcription.whisper.model),
        .positive("transcription.memory_mib", \.transcription.whisper.memoryMiB, maximum: 1 << 30),
        .positive("transcription.cpu_seconds", \.transcription.whisper.cpuSeconds),
        .positive("transcription.batch_size", \.transcription.whisper.batchSize, maximum: WhisperConfiguration.batchSizeRange.upperBound),
        .positive("reports.max_concurrent", \.reports.maxConcurrent),
        .positive("reports.max_queued", \.reports.maxQueued),
        .positive("reports.face_max_width", \.faceScanner.maxFrameWidth),
        .positive("reports.face_max_height", \.faceScanner.maxFrameHeight),
        .positive("reports.face_memory_mib", \.faceScanner.memoryMiB),
        .positive("reports.face_cpu_seconds", \.faceScanner.cpuSeconds),
        .optionalText("studies.completion_command", \.studyCompletion.command),
        .number("studies.completion_command_timeout", \.studyCompletion.timeout) { $0 > 0 && $0 <= 86_400 },
        .number("studies.invitation_lifetime", \.invitationLifetime) { $0 >= 60 && $0 <= 366 * 86_400 },
        .number("studies.invited_session_idle", \.invitedSessionIdle) { $0 >= 10 && $0 <= 7 * 86_400 },
        .positive("pool.max_testers", \.pool.maxTesters),
        .positive("pool.max_profile_text", \.pool.maxProfileText),
        .positive("pool.max_consent_bytes", \.pool.maxConsentBytes),
        .positive("pool.max_fields", \.pool.maxFields),
        .init(key: "storage.postgres.url", kind: .string, current: { $0.replication.url }) { value, config in
            config.replication.url = value
            return true
        },
        .optionalText("storage.postgres.password_file", \.replication.passwordFile),
        .init(key: "storage.postgres.lab", kind: .string, current: { $0.replication.lab }) { value, config in
            config.replication.lab = value.isEmpty ? ReplicationSettings.defaultLab : value
            return true
        },
        .positive("storage.postgres.batch_events", \.replication.batchEvents),
        .number("storage.postgres.interval", \.replication.interval) { $0 > 0 && $0 <= 3600 },
        .number("storage.postgres.timeout", \.replication.timeout) { $0 >= 1 && $0 <= 3600 },
        .positive("import.max_file_bytes", \.importLimits.maxFileBytes),
        .positive("import.max_events", \.importLimits.maxEvents),
        .number("import.max_time_regression", \.importLimits.maxTimeRegression) { $0 >= 0 && $0.isFinite },
        .flag("console.enabled", \.console.enabled),
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
        .init(key: "console.trusted_proxies", kind: .stringList, current: { $0.console.trustedProxies.joined(separator: ",") }) { value, config in
            let ranges = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard ranges.allSatisfy({ NetworkRange($0) != nil }) else { return false }
            config.console.trustedProxies = ranges
            return true
        },
        .flag("console.allow_plaintext", \.console.allowPlaintext),
        .optionalText("console.tls_certificate", \.console.tlsCertificate),
        .optionalText("console.tls_key", \.console.tlsKey),
        .number("console.login_code_seconds", \.console.access.loginCodeSeconds) { $0 > 0 },
        .init(key: "console.session_hours", kind: .number, current: { String($0.console.access.sessionSeconds / 3600) }) { value, config in
            guard let hours = Double(value), hours > 0 else { return false }
            config.console.access.sessionSeconds = hours * 3600
            return true
        },
        .positive("console.live_buffer", \.console.liveBuffer),
        .number("console.live_batch_ms", \.console.liveBatchMilliseconds) { $0 >= 0 && $0 <= 1000 },
        .positive("console.max_body_bytes", \.console.maxBodyBytes),
        .positive("console.max_connections", \.consoleConnections.maxConnections, reloadable: true),
        .number("console.header_timeout", \.consoleConnections.headerTimeout) { $0 >= 0 && $0 <= 86_400 },
        .number("console.tls_handshake_timeout", \.consoleConnections.tlsHandshakeTimeout) { $0 >= 0 && $0 <= 86_400 },
        .number("console.idle_timeout", \.consoleConnections.idleTimeout) { $0 >= 0 && $0 <= 86_400 },
        .number("console.websocket_ping", \.consoleConnections.webSocketPing) { $0 >= 0 && $0 <= 86_400 },
        .optionalText("console.report_configurations", \.console.reportConfigurations),
        .positive("console.public_requests_per_minute", \.console.visitors.requestsPerMinute),
        .positive("pool.enrolments_per_hour", \.console.visitors.enrolmentsPerHour),
        .positive("pool.withdrawals_per_hour", \.console.visitors.withdrawalsPerHour),
        .init(key: "log.level", kind: .choice(Logger.Level.allCases.map(\.rawValue)), reloadable: true,
              current: { $0.logLevel.rawValue }) { value, config in
            guard let level = Logger.Level(rawValue: value) else { return false }
            config.logLevel = level
            return true
        },
        .positive("log.queue_lines", \.logQueueLines, reloadable: true),
    ]
}

/// The TLS files with one of them changed; nil once none is set (plaintext).
private func tlsFiles(_ current: CaptureTLSFiles?, _ change: (inout CaptureTLSFiles) -> Void) -> CaptureTLSFiles? {
    var files = current ?? CaptureTLSFiles(certificate: "", key: "")
    change(&files)
    return files.certificate.isEmpty && files.key.isEmpty && files.clientCA == nil ? nil : files
}
