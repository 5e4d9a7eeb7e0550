public import Foundation
public import Logging
internal import NIOConcurrencyHelpers

/// The daemon's log level, shared by all its loggers, so that a reload (SIGHUP) changes it everywhere.
public final class LogLevelSetting: Sendable {
    private let box: NIOLockedValueBox<Logger.Level>

    public init(_ level: Logger.Level) {
        box = NIOLockedValueBox(level)
    }

    public var level: Logger.Level {
        get { box.withLockedValue { $0 } }
        set { box.withLockedValue { $0 = newValue } }
    }
}

/// Logs one line per message to stderr. Under systemd (JOURNAL_STREAM set) each line starts with
/// the syslog priority, `<3>` … `<7>`, which journald turns into the entry's priority; in a
/// terminal it starts with the time and level instead. swift-log's StreamLogHandler has no
/// priority prefix, hence this small handler.
public struct StderrLogHandler: LogHandler {
    private let level: LogLevelSetting
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let forJournal: Bool

    public init(label: String, level: LogLevelSetting, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.label = label
        self.level = level
        forJournal = environment["JOURNAL_STREAM"] != nil
    }

    public var logLevel: Logger.Level {
        get { level.level }
        set { level.level = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let fields = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let line: String
        if forJournal {
            line = "<\(Self.priority(event.level))>\(event.message)\(fields)\n"
        } else {
            line = "\(Date().formatted(.iso8601)) \(event.level.rawValue.uppercased()) \(label): \(event.message)\(fields)\n"
        }
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// syslog priorities (sd-daemon(3)).
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}
