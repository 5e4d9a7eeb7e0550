public import SessionModel
internal import Foundation

/// Which lines a tail wants.
public struct TailFilter: Sendable, Equatable {
    /// nil: every session, also those started later.
    public var sessions: Set<Int64>?
    /// Empty: every class. Markers pass whatever the classes.
    public var classes: Set<String>
    public var device: String?
    /// A substring of the event's class, device or payload.
    public var grep: String?

    public init(sessions: Set<Int64>? = nil, classes: Set<String> = [], device: String? = nil, grep: String? = nil) {
        self.sessions = sessions
        self.classes = classes
        self.device = device
        self.grep = grep
    }

    public func admits(_ line: TailLine) -> Bool {
        if let sessions, let session = line.session, !sessions.contains(session) { return false }
        if let device, let lineDevice = line.device, lineDevice != device { return false }
        if let speech = line.speech {
            // Speech is no event class: a tail of some classes leaves it out.
            guard classes.isEmpty else { return false }
            return grep.map { $0.isEmpty || speech.contains($0) } ?? true
        }
        guard let event = line.event else { return true }
        if !classes.isEmpty, !classes.contains(event.eventClass) { return false }
        if let grep, !grep.isEmpty {
            return event.eventClass.contains(grep) || event.device.contains(grep) || event.payload.contains(grep)
        }
        return true
    }
}

/// Fans stored events and session markers out to the live tails.
///
/// Publishing never waits for a reader: each subscription has a bounded buffer, and what does
/// not fit is counted and reported to the reader as skipped (`Broadcast`). So a paused terminal
/// or a `| less` never slows ingest or the other tails. With no subscriber, publishing costs one
/// atomic load (the commit path checks `isFollowed` before building lines).
public final class LiveTail: Sendable {
    private let broadcast = Broadcast<TailLine>()

    public init() {}

    /// Whether anybody follows; lets the hot path skip building lines.
    public var isFollowed: Bool { broadcast.followers > 0 }

    /// Live tails open now (`status`).
    public var followers: Int { broadcast.followers }

    /// A new subscription holding at most `capacity` undelivered lines.
    public func subscribe(_ filter: TailFilter, capacity: Int) -> TailSubscription {
        broadcast.subscribe(capacity: capacity, admits: filter.admits) { count, near in
            TailLine(kind: .skipped, time: near?.time ?? Date().timeIntervalSince1970, count: count)
        }
    }

    public func publish(_ lines: [TailLine]) {
        broadcast.publish(lines)
    }

    public func publish(_ line: TailLine) {
        publish([line])
    }

    /// The daemon shuts down: every tail gets a last line and ends.
    public func closeAll(now: Double) {
        broadcast.finish(last: [TailLine(kind: .daemonStopping, time: now)])
    }
}

/// One reader's view of the live tail: `next()` waits for lines and takes all that are buffered.
public typealias TailSubscription = BroadcastSubscription<TailLine>
