public import SessionModel
public import Synchronization

/// Daemon-wide counters, shown by `muevalctl status`. Lock-free: they are bumped on the hot path.
public final class CaptureCounters: Sendable {
    public let connectionsAccepted = Atomic<Int>(0)
    public let connectionsRefused = Atomic<Int>(0)
    public let connectionsOpen = Atomic<Int>(0)
    public let eventsReceived = Atomic<Int>(0)
    public let eventsStored = Atomic<Int>(0)
    public let eventsDuplicate = Atomic<Int>(0)
    /// Events whose sensor the session did not select.
    public let eventsFiltered = Atomic<Int>(0)
    /// Events from devices with no session, under the `reject` policy.
    public let eventsRejectedNoSession = Atomic<Int>(0)
    /// Events that reached storage but could not be written (disk full, I/O error).
    public let eventsFailedStorage = Atomic<Int>(0)
    /// Malformed messages, all kinds.
    public let malformedMessages = Atomic<Int>(0)
    /// Replies not sent because the device was not reading them.
    public let repliesDropped = Atomic<Int>(0)
    /// Devices refused for a missing or wrong device token or pairing code.
    public let authenticationFailures = Atomic<Int>(0)
    public let bytesReceived = Atomic<Int>(0)
    /// Media chunks stored (think-aloud audio, face video), duplicates not counted.
    public let mediaChunksStored = Atomic<Int>(0)
    /// Media chunks refused: over the session's media limit.
    public let mediaRefused = Atomic<Int>(0)
    /// TLS handshakes that failed on the TLS listener.
    public let tlsHandshakeFailures = Atomic<Int>(0)
    /// Pairing attempts refused unread: their address sent too many wrong codes (`PairingGuard`).
    public let pairingRefused = Atomic<Int>(0)
    /// Connections and WebSocket upgrades turned away at the door, by reason (rare: counted under a lock, logged
    /// once a minute per address).
    public let refusals = Refusals()

    public init() {}

    public func snapshot() -> CounterSnapshot {
        CounterSnapshot(connectionsAccepted: connectionsAccepted.load(ordering: .relaxed),
                 connectionsRefused: connectionsRefused.load(ordering: .relaxed),
                 connectionsOpen: connectionsOpen.load(ordering: .relaxed),
                 eventsReceived: eventsReceived.load(ordering: .relaxed),
                 eventsStored: eventsStored.load(ordering: .relaxed),
                 eventsDuplicate: eventsDuplicate.load(ordering: .relaxed),
                 eventsFiltered: eventsFiltered.load(ordering: .relaxed),
                 eventsRejectedNoSession: eventsRejectedNoSession.load(ordering: .relaxed),
                 eventsFailedStorage: eventsFailedStorage.load(ordering: .relaxed),
                 malformedMessages: malformedMessages.load(ordering: .relaxed),
                 repliesDropped: repliesDropped.load(ordering: .relaxed),
                 authenticationFailures: authenticationFailures.load(ordering: .relaxed),
                 bytesReceived: bytesReceived.load(ordering: .relaxed),
                 mediaChunksStored: mediaChunksStored.load(ordering: .relaxed),
                 mediaRefused: mediaRefused.load(ordering: .relaxed),
                 tlsHandshakeFailures: tlsHandshakeFailures.load(ordering: .relaxed),
                 pairingRefused: pairingRefused.load(ordering: .relaxed),
                 refusals: refusals.counts())
    }
}

extension Atomic where Value == Int {
    /// Adds `amount`; relaxed ordering is enough for statistics.
    @inlinable
    public func add(_ amount: Int) {
        wrappingAdd(amount, ordering: .relaxed)
    }
}
