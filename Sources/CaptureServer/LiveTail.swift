public import ControlProtocol
internal import DequeModule
internal import Foundation
internal import JournalStorage
internal import NIOConcurrencyHelpers
internal import Synchronization

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
/// not fit is counted and reported to the reader as skipped. So a paused terminal or a
/// `| less` never slows ingest or the other tails. With no subscriber, publishing costs one
/// atomic load (the commit path checks `isFollowed` before building lines).
public final class LiveTail: Sendable {
    private let subscriptions = NIOLockedValueBox<[UInt64: TailSubscription]>([:])
    private let subscriberCount = Atomic<Int>(0)
    private let nextID = Atomic<UInt64>(1)
    private let closed = Atomic<Bool>(false)

    public init() {}

    /// Whether anybody follows; lets the hot path skip building lines.
    public var isFollowed: Bool { subscriberCount.load(ordering: .relaxed) > 0 }

    /// Live tails open now (`status`).
    public var followers: Int { subscriberCount.load(ordering: .relaxed) }

    /// A new subscription holding at most `capacity` undelivered lines.
    public func subscribe(_ filter: TailFilter, capacity: Int) -> TailSubscription {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let subscription = TailSubscription(filter: filter, capacity: max(capacity, 1)) { [weak self] in
            self?.unsubscribe(id)
        }
        subscriptions.withLockedValue { $0[id] = subscription }
        subscriberCount.add(1, ordering: .relaxed)
        if closed.load(ordering: .acquiring) { subscription.finish() }
        return subscription
    }

    public func publish(_ lines: [TailLine]) {
        guard isFollowed, !lines.isEmpty else { return }
        for subscription in subscriptions.withLockedValue({ Array($0.values) }) {
            subscription.offer(lines)
        }
    }

    public func publish(_ line: TailLine) {
        publish([line])
    }

    /// The daemon shuts down: every tail gets a last line and ends.
    public func closeAll(now: Double) {
        closed.store(true, ordering: .releasing)
        for subscription in subscriptions.withLockedValue({ Array($0.values) }) {
            subscription.offer([TailLine(kind: .daemonStopping, time: now)], evenIfFull: true)
            subscription.finish()
        }
    }

    private func unsubscribe(_ id: UInt64) {
        if subscriptions.withLockedValue({ $0.removeValue(forKey: id) }) != nil {
            subscriberCount.subtract(1, ordering: .relaxed)
        }
    }
}

/// One reader's view of the live tail: a bounded buffer and a way to wait for it.
public final class TailSubscription: Sendable {
    public let filter: TailFilter
    private let capacity: Int
    private let onCancel: @Sendable () -> Void

    private struct State {
        var buffer: Deque<TailLine> = []
        /// Lines dropped since the buffer last had room, not yet reported.
        var skipped = 0
        var finished = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = NIOLockedValueBox(State())

    init(filter: TailFilter, capacity: Int, onCancel: @escaping @Sendable () -> Void) {
        self.filter = filter
        self.capacity = capacity
        self.onCancel = onCancel
    }

    /// Queues what the filter admits; what does not fit is counted as skipped.
    func offer(_ lines: [TailLine], evenIfFull: Bool = false) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            guard !state.finished else { return nil }
            var added = false
            for line in lines where filter.admits(line) {
                if state.buffer.count >= capacity, !evenIfFull {
                    state.skipped += 1
                    continue
                }
                // The gap is reported where it happened: before the first line after it.
                if state.skipped > 0 {
                    state.buffer.append(TailLine(kind: .skipped, time: line.time, count: state.skipped))
                    state.skipped = 0
                }
                state.buffer.append(line)
                added = true
            }
            guard added else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func finish() {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Waits for lines and takes all that are buffered; nil once the tail has ended and is drained.
    public func next() async -> [TailLine]? {
        while true {
            if let lines = take() { return lines.isEmpty ? nil : lines }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = state.withLockedValue { state -> Bool in
                        if !state.buffer.isEmpty || state.skipped > 0 || state.finished { return true }
                        state.waiter = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                finish()
            }
        }
    }

    /// Buffered lines (with a pending skip note), an empty array when finished and drained, nil when there is nothing yet.
    private func take() -> [TailLine]? {
        state.withLockedValue { state -> [TailLine]? in
            var lines = Array(state.buffer)
            state.buffer.removeAll(keepingCapacity: true)
            if state.skipped > 0 {
                lines.append(TailLine(kind: .skipped, time: lines.last?.time ?? Date().timeIntervalSince1970, count: state.skipped))
                state.skipped = 0
            }
            if !lines.isEmpty { return lines }
            return state.finished ? [] : nil
        }
    }

    /// Stops delivery and leaves the hub.
    public func cancel() {
        finish()
        onCancel()
    }
}
