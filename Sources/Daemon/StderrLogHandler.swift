internal import DescriptorIO
public import Foundation
public import Logging
internal import NIOConcurrencyHelpers
internal import WireProtocol
#if canImport(Glibc)
internal import Glibc
#endif

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
/// priority prefix, hence this small handler. Lines are written by `LogWriter` on a thread of its
/// own: logging never waits for the reader of stderr.
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

    /// The one writer of the process's stderr log.
    static let writer = LogWriter(fileDescriptor: STDERR_FILENO, capacity: 10_000) { dropped in
        StderrLogHandler(label: "muevald", level: LogLevelSetting(.warning))
            .line(.warning, "\(dropped) log lines dropped: stderr was not read fast enough", metadata: [:])
    }

    /// How many lines may wait for stderr's reader (`log.queue_lines`).
    public static func setQueueLimit(_ lines: Int) {
        writer.setCapacity(lines)
    }

    /// Waits until the lines logged so far are written (at most `timeout`): before the process exits.
    public static func flush(timeout: Duration = .seconds(2)) {
        writer.flush(timeout: timeout)
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
        Self.writer.write(line(event.level, event.message.description, metadata: merged))
    }

    private func line(_ level: Logger.Level, _ message: String, metadata: Logger.Metadata) -> String {
        let fields = metadata.isEmpty ? "" : " " + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        if forJournal { return "<\(Self.priority(level))>\(message)\(fields)\n" }
        return "\(DateText.seconds(Date().timeIntervalSince1970)) \(level.rawValue.uppercased()) \(label): \(message)\(fields)\n"
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

/// Writes lines to a file descriptor from a thread of its own, through a bounded queue: whoever
/// logs (an event loop, the journal writer) never blocks on a slow or stalled reader such as a
/// paused terminal or a journald under load. When the queue is full, lines are dropped and
/// counted, and the next write says how many.
final class LogWriter: @unchecked Sendable {
    private let fileDescriptor: Int32
    private let droppedNotice: @Sendable (Int) -> String
    /// true while lines wait; the state below is guarded by its lock.
    private let condition = ConditionLock(value: false)
    private var queued: [String] = []
    private var capacity: Int
    private var dropped = 0
    private var writing = false

    init(fileDescriptor: Int32, capacity: Int, droppedNotice: @escaping @Sendable (Int) -> String) {
        self.fileDescriptor = fileDescriptor
        self.capacity = capacity
        self.droppedNotice = droppedNotice
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "muevald-log"
        thread.start()
    }

    func setCapacity(_ lines: Int) {
        condition.lock()
        capacity = max(1, lines)
        condition.unlock(withValue: !queued.isEmpty)
    }

    /// Queues a line; never waits.
    func write(_ line: String) {
        condition.lock()
        guard queued.count < capacity else {
            dropped += 1
            condition.unlock()
            return
        }
        queued.append(line)
        condition.unlock(withValue: true)
    }

    func flush(timeout: Duration) {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            condition.lock()
            let done = queued.isEmpty && !writing
            condition.unlock()
            if done { return }
            usleep(1000)
        }
    }

    private func run() {
        while true {
            condition.lock(whenValue: true)
            let lines = queued
            let lost = dropped
            queued.removeAll(keepingCapacity: true)
            dropped = 0
            writing = true
            condition.unlock(withValue: false)
            var text = lost > 0 ? droppedNotice(lost) : ""
            for line in lines { text += line }
            // A reader that is gone (EPIPE) or any other error loses the rest.
            try? Descriptor(fileDescriptor).writeAll(Array(text.utf8))
            condition.lock()
            writing = false
            condition.unlock(withValue: !queued.isEmpty)
        }
    }
}
