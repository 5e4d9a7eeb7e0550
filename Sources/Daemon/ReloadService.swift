internal import Foundation
internal import Logging
internal import ServiceLifecycle
internal import UnixSignals

/// Rereads the configuration on SIGHUP (`systemctl reload muevald`) and applies what can change
/// without a restart: log level, limits, the Zeroconf name. It says what it applied and what
/// needs a restart; an invalid file is reported and the running configuration stays. It also
/// makes the control socket anew if its file was removed.
final class ReloadService: Service {
    private let source: ConfigurationSource
    private let initial: DaemonConfiguration
    private let apply: @Sendable (DaemonConfiguration) -> Void
    /// Runs on every SIGHUP, whatever the configuration says (repairs such as a removed socket).
    private let onHangup: @Sendable () -> Void
    private let logger: Logger

    init(source: ConfigurationSource, initial: DaemonConfiguration, logger: Logger,
         onHangup: @escaping @Sendable () -> Void, apply: @escaping @Sendable (DaemonConfiguration) -> Void) {
        self.source = source
        self.initial = initial
        self.logger = logger
        self.onHangup = onHangup
        self.apply = apply
    }

    func run() async {
        // Trapping replaces SIGHUP's default action, which would end the process.
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        var running = initial
        for await _ in hangups.cancelOnGracefulShutdown() {
            onHangup()
            running = reload(running)
        }
    }

    private func reload(_ running: DaemonConfiguration) -> DaemonConfiguration {
        let new: DaemonConfiguration
        do {
            new = try source.load()
        } catch {
            logger.error("reload: \(error); the running configuration stays")
            return running
        }
        let (reloaded, applied, needRestart) = running.reloaded(from: new)
        apply(reloaded)
        let from = source.file ?? "the environment"
        if applied.isEmpty, needRestart.isEmpty {
            logger.notice("reload: \(from) has no changes")
        } else {
            if !applied.isEmpty { logger.notice("reload: applied \(applied.joined(separator: ", ")) from \(from)") }
            if !needRestart.isEmpty {
                logger.warning("reload: not applied, need a restart (systemctl restart muevald): \(needRestart.joined(separator: ", "))")
            }
        }
        return reloaded
    }
}
