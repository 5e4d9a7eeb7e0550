internal import Foundation

/// The highest seq an automatic session stored of its device before it stopped for the device's drop,
/// known once that stop has committed the session's last events. The device's next session waits for it
/// on its own journal's queue before it stores anything (`SessionRegistry.perform`, `.applyResendFloor`):
/// a device may come back while its last session is still being stopped.
final class ResendFloor: @unchecked Sendable {
    /// The session whose stop settles it.
    let session: Int64
    /// `settled` and `seq` only under it.
    private let condition = NSCondition()
    private var settled = false
    private var seq: Int64?

    init(session: Int64) {
        self.session = session
    }

    /// The stop's answer (nil: the session stored no seq of the device, or its stop failed). The first one counts.
    func settle(_ seq: Int64?) {
        condition.lock()
        defer { condition.unlock() }
        guard !settled else { return }
        settled = true
        self.seq = seq
        condition.broadcast()
    }

    /// Blocks until the stop settled it: on a journal's queue, never on an event loop. Every stop settles
    /// it, however it ends (`SessionRegistry.stop`).
    func wait() -> Int64? {
        condition.lock()
        defer { condition.unlock() }
        while !settled { condition.wait() }
        return seq
    }
}
