internal import MemberwiseInit

/// A copy of the counters at one moment; the JSON keys are part of `muevalctl status --json`.
@MemberwiseInit
public struct CounterSnapshot: Codable, Sendable, Equatable {
    public var connectionsAccepted: Int = 0
    public var connectionsRefused: Int = 0
    public var connectionsOpen: Int = 0
    public var eventsReceived: Int = 0
    public var eventsStored: Int = 0
    public var eventsDuplicate: Int = 0
    public var eventsFiltered: Int = 0
    public var eventsRejectedNoSession: Int = 0
    public var eventsFailedStorage: Int = 0
    public var malformedMessages: Int = 0
    public var repliesDropped: Int = 0
    public var authenticationFailures: Int = 0
    public var bytesReceived: Int = 0
    public var mediaChunksStored: Int = 0
    public var mediaRefused: Int = 0
    /// TLS connections whose handshake failed (plaintext to the TLS port, an untrusted or expired
    /// certificate); absent in the JSON of a muevald before TLS, read as 0.
    public var tlsHandshakeFailures: Int = 0
    /// Pairing attempts refused without comparing the code: their address sent too many wrong
    /// codes (backoff or lockout); absent in the JSON of a muevald before the limit, read as 0.
    public var pairingRefused: Int = 0

    private enum CodingKeys: String, CodingKey {
        case connectionsAccepted, connectionsRefused, connectionsOpen, eventsReceived, eventsStored, eventsDuplicate, eventsFiltered,
             eventsRejectedNoSession, eventsFailedStorage, malformedMessages, repliesDropped, authenticationFailures, bytesReceived,
             mediaChunksStored, mediaRefused, tlsHandshakeFailures, pairingRefused
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func count(_ key: CodingKeys) throws -> Int { try c.decodeIfPresent(Int.self, forKey: key) ?? 0 }
        self.init(connectionsAccepted: try count(.connectionsAccepted), connectionsRefused: try count(.connectionsRefused),
                  connectionsOpen: try count(.connectionsOpen), eventsReceived: try count(.eventsReceived),
                  eventsStored: try count(.eventsStored), eventsDuplicate: try count(.eventsDuplicate),
                  eventsFiltered: try count(.eventsFiltered), eventsRejectedNoSession: try count(.eventsRejectedNoSession),
                  eventsFailedStorage: try count(.eventsFailedStorage), malformedMessages: try count(.malformedMessages),
                  repliesDropped: try count(.repliesDropped), authenticationFailures: try count(.authenticationFailures),
                  bytesReceived: try count(.bytesReceived), mediaChunksStored: try count(.mediaChunksStored),
                  mediaRefused: try count(.mediaRefused), tlsHandshakeFailures: try count(.tlsHandshakeFailures),
                  pairingRefused: try count(.pairingRefused))
    }
}
