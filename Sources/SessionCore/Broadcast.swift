internal import DequeModule
internal import MuEvalAsync
internal import NIOConcurrencyHelpers
internal import Synchronization

/// Fans values out to subscribers without ever waiting for one: each subscription has a bounded
/// buffer, and what does not fit is counted and handed to its reader as one gap marker, where the
/// gap happened. The live tail's lines, the sessions' lifecycle events and the finished reports go out this way.
package final class Broadcast<Element: Sendable>: Sendable {
    /// The marker for `count` dropped values; `near` is the value after the gap, or the one before
    /// it when the gap ends what is buffered (nil: nothing is).
    package typealias Gap = @Sendable (_ count: Int, _ near: Element?) -> Element

    private let subscriptions = NIOLockedValueBox<[UInt64: BroadcastSubscription<Element>]>([:])
    private let subscriberCount = Atomic<Int>(0)
    private let nextID = Atomic<UInt64>(1)
    private let finished = Atomic<Bool>(false)

    package init() {}

    /// Subscriptions open now; one atomic load, so that a publisher can skip building what nobody reads.
    package var followers: Int { subscriberCount.load(ordering: .relaxed) }

    /// A new subscription holding at most `capacity` undelivered values that `admits` lets through.
    package func subscribe(capacity: Int, admits: @escaping @Sendable (Element) -> Bool = { _ in true },
                   gap: @escaping Gap) -> BroadcastSubscription<Element> {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let subscription = BroadcastSubscription(capacity: max(capacity, 1), admits: admits, gap: gap) { [weak self] in
            self?.unsubscribe(id)
        }
        subscriptions.withLockedValue { $0[id] = subscription }
        subscriberCount.add(1, ordering: .relaxed)
        if finished.load(ordering: .acquiring) { subscription.finish() }
        return subscription
    }

    package func publish(_ elements: [Element]) {
        guard followers > 0, !elements.isEmpty else { return }
        for subscription in subscriptions.withLockedValue({ Array($0.values) }) {
            subscription.offer(elements)
        }
    }

    /// Every subscription gets `last` (room or not) and ends; later ones end at once.
    package func finish(last: [Element]) {
        finished.store(true, ordering: .releasing)
        for subscription in subscriptions.withLockedValue({ Array($0.values) }) {
            subscription.offer(last, evenIfFull: true)
            subscription.finish()
        }
    }

    private func unsubscribe(_ id: UInt64) {
        if subscriptions.withLockedValue({ $0.removeValue(forKey: id) }) != nil {
            subscriberCount.subtract(1, ordering: .relaxed)
        }
    }
}

/// One reader's bounded buffer of a `Broadcast`, and the way to wait for it.
public final class BroadcastSubscription<Element: Sendable>: Sendable {
    private struct State {
        var buffer: Deque<Element> = []
        /// Values dropped since the buffer last had room, not yet reported.
        var skipped = 0
        var finished = false
    }

    private let capacity: Int
    private let admits: @Sendable (Element) -> Bool
    private let gap: Broadcast<Element>.Gap
    private let onCancel: @Sendable () -> Void
    private let state = AsyncCondition(State())

    init(capacity: Int, admits: @escaping @Sendable (Element) -> Bool, gap: @escaping Broadcast<Element>.Gap,
         onCancel: @escaping @Sendable () -> Void) {
        self.capacity = capacity
        self.admits = admits
        self.gap = gap
        self.onCancel = onCancel
    }

    /// Queues what the subscription admits; what does not fit is counted as skipped.
    func offer(_ elements: [Element], evenIfFull: Bool = false) {
        state.withState { state in
            guard !state.finished else { return }
            for element in elements where admits(element) {
                if state.buffer.count >= capacity, !evenIfFull {
                    state.skipped += 1
                    continue
                }
                // The gap is reported where it happened: before the first value after it.
                if state.skipped > 0 {
                    state.buffer.append(gap(state.skipped, element))
                    state.skipped = 0
                }
                state.buffer.append(element)
            }
        }
    }

    func finish() {
        state.withState { $0.finished = true }
    }

    /// Waits for values and takes all that are buffered (a pending gap marker last); nil once the
    /// subscription has ended and is drained, or its task was cancelled.
    public func next() async -> [Element]? {
        while true {
            if let elements = take() { return elements.isEmpty ? nil : elements }
            if !(await state.wait { !$0.buffer.isEmpty || $0.skipped > 0 || $0.finished }) { finish() }
        }
    }

    /// Buffered values, an empty array when finished and drained, nil when there is nothing yet.
    private func take() -> [Element]? {
        state.withState { state -> [Element]? in
            var elements = Array(state.buffer)
            state.buffer.removeAll(keepingCapacity: true)
            if state.skipped > 0 {
                elements.append(gap(state.skipped, elements.last))
                state.skipped = 0
            }
            if !elements.isEmpty { return elements }
            return state.finished ? [] : nil
        }
    }

    /// Stops delivery and leaves the broadcast.
    public func cancel() {
        finish()
        onCancel()
    }
}
