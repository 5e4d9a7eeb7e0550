import NIOCore

/// What a phone's timer is for.
enum PhoneTimer {
    /// The 100 ms batch due at `due` (the exact moment, from which its lateness is measured).
    case record(due: Double)
    /// converse's wake-up every 0.5 s; `conversation` tells a stale one from the current one.
    case poll(conversation: Int)
}

/// The phones' batch and poll timers, gathered into slots of `--timer-slot-ms` (5 by default): one NIO task per
/// slot instead of one per timer. 500 phones' batches are 5,000 timers a second, and a wake-up for each (epoll, the
/// timer's re-arm, a context switch) with NIO's heap of scheduled tasks cost 40 % of this client's CPU at 200
/// phones. A page's timers drift by a few milliseconds too; each batch's lateness (`batch_lateness`) is still
/// measured from its exact moment, so the slot shows in it (p50 about half a slot).
struct Timers {
    private let width: Double
    private var slots: [Int64: [(PhoneDriver, PhoneTimer)]] = [:]
    /// The slot being fired: a timer set for it or earlier goes to the next one.
    private var firing: Int64 = .min

    init(slotSeconds: Double) {
        width = max(slotSeconds, 1e-6)  // 0: each timer at its moment (to the microsecond)
    }

    /// Adds a timer for `time`; true when its slot is new, and needs a NIO task at `deadline(of:)`.
    mutating func add(_ timer: PhoneTimer, for driver: PhoneDriver, at time: Double) -> Int64? {
        let slot = max(Int64((time / width).rounded(.up)), firing + 1)
        let isNew = slots[slot] == nil
        slots[slot, default: []].append((driver, timer))
        return isNew ? slot : nil
    }

    func deadline(of slot: Int64) -> NIODeadline {
        Clock.deadline(Double(slot) * width)
    }

    /// The timers of `slot`, in the order they were set; later ones go to later slots.
    mutating func take(_ slot: Int64) -> [(PhoneDriver, PhoneTimer)] {
        firing = slot
        return slots.removeValue(forKey: slot) ?? []
    }

    /// After a slot's timers ran.
    mutating func fired() {
        firing = .min
    }
}
