public import SessionModel

/// What happened to a session: the one stream of lifecycle events the session core publishes
/// (docs/SESSION-CORE.md). Per session and per device connection, never per recorded event.
public enum SessionEvent: Sendable, Equatable {
    /// Started by a developer (`muevalctl start`, the console) or opened by the `auto` policy.
    case started(SessionRecord)
    /// A device connection records into the session now (the record says `recording`).
    case deviceAttached(SessionRecord, device: DeviceRecord)
    /// A device connection ended; `cleanly` when it said goodbye. When it was the last one, the
    /// record says `interrupted` (a session of the `auto` policy is stopped instead).
    case deviceDetached(SessionRecord, device: String, cleanly: Bool)
    /// A developer's wrong-code limit gave these sessions new pairing codes.
    case pairingCodesChanged([SessionRecord])
    /// Its stop began: it takes no more events; its file is not final yet.
    case stopping(SessionRecord)
    /// Stopped and its file final: what reads the file (transcription, the automatic report) starts here.
    case stopped(SessionRecord)
    /// Made or grown by an import of `file`, and as final as a stopped session.
    case imported(SessionRecord, file: String)
    case deleted(SessionRecord)
    /// A study's recruitment was made or changed (its target, deadline or invitations): what tracks it looks again.
    case recruitmentChanged(study: String)
    /// A study's recruitment met its target or passed its deadline and its cumulative report was written to
    /// `report` (index.html; empty: it could not be): published once per study.
    case studyCompleted(study: String, reason: Recruitment.CompletionReason, report: String)
    /// The subscriber fell behind and `count` events were dropped here: what it keeps must be made
    /// good from `SessionRegistry.sessions()` (a stop it must act on may be among them).
    case missed(Int)

    /// The session the event is about; nil for several or none.
    public var session: Int64? {
        switch self {
        case .started(let record), .deviceAttached(let record, _), .deviceDetached(let record, _, _),
             .stopping(let record), .stopped(let record), .imported(let record, _), .deleted(let record):
            record.id
        case .pairingCodesChanged, .missed, .recruitmentChanged, .studyCompleted:
            nil
        }
    }
}

/// Where the core publishes `SessionEvent`s; `SessionRegistry.events`. Each subscriber has a
/// bounded buffer (`limits.lifecycle_buffer`): publishing never waits for a subscriber, and one
/// that falls behind gets `.missed(count)` where events were dropped.
public final class SessionEvents: Sendable {
    /// Events a subscriber may leave unread before they are dropped for it.
    public static let defaultCapacity = 1_000

    private let broadcast = Broadcast<SessionEvent>()
    private let capacity: Int

    public init(capacity: Int = SessionEvents.defaultCapacity) {
        self.capacity = capacity
    }

    /// A subscription from now on, with a buffer of `capacity` events (default: the configured one).
    /// Subscribe before the events you must not miss can happen (in the daemon: before its services run).
    public func subscribe(capacity: Int? = nil) -> SessionEventSubscription {
        SessionEventSubscription(broadcast.subscribe(capacity: capacity ?? self.capacity) { count, _ in .missed(count) })
    }

    /// Subscriptions open now.
    public var subscribers: Int { broadcast.followers }

    func publish(_ events: [SessionEvent]) {
        broadcast.publish(events)
    }

    /// Every subscription ends once it has delivered what it holds (the registry shuts down).
    func finish() {
        broadcast.finish(last: [])
    }
}

/// One subscriber's events, in the order they happened: `for await event in subscription`.
/// It ends when the registry shuts down, when `cancel()` is called, or when the iterating task is
/// cancelled; dropping the last reference to it (and its iterator) cancels it too.
public final class SessionEventSubscription: AsyncSequence, Sendable {
    public typealias Element = SessionEvent
    public typealias Failure = Never

    private let subscription: BroadcastSubscription<SessionEvent>

    init(_ subscription: BroadcastSubscription<SessionEvent>) {
        self.subscription = subscription
    }

    deinit {
        subscription.cancel()
    }

    public func cancel() {
        subscription.cancel()
    }

    /// Waits for events and takes all that are buffered; nil once the subscription has ended.
    public func next() async -> [SessionEvent]? {
        await subscription.next()
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(subscription: self)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let subscription: SessionEventSubscription
        private var pending: [SessionEvent] = []
        private var index = 0

        init(subscription: SessionEventSubscription) {
            self.subscription = subscription
        }

        public mutating func next() async -> SessionEvent? {
            if index == pending.count {
                guard let events = await subscription.next() else { return nil }
                pending = events
                index = 0
            }
            defer { index += 1 }
            return pending[index]
        }
    }
}
