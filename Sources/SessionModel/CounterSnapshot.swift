/// A copy of the counters at one moment; the JSON keys are part of `muevalctl status --json`.
public struct CounterSnapshot: Codable, Sendable, Equatable {
    public var connectionsAccepted: Int
    public var connectionsRefused: Int
    public var connectionsOpen: Int
    public var eventsReceived: Int
    public var eventsStored: Int
    public var eventsDuplicate: Int
    public var eventsFiltered: Int
    public var eventsRejectedNoSession: Int
    public var eventsFailedStorage: Int
    public var malformedMessages: Int
    public var repliesDropped: Int
    public var authenticationFailures: Int
    public var bytesReceived: Int
    public var mediaChunksStored: Int
    public var mediaRefused: Int
    /// TLS connections whose handshake failed (plaintext to the TLS port, an untrusted or expired
    /// certificate); absent in the JSON of a muevald before TLS, read as 0.
    public var tlsHandshakeFailures: Int
    /// Pairing attempts refused without comparing the code: their address sent too many wrong
    /// codes (backoff or lockout); absent in the JSON of a muevald before the limit, read as 0.
    public var pairingRefused: Int
    /// Connections and WebSocket upgrades turned away before they carried anything, by `RefusalReason`'s raw
    /// value, every reason present; absent in the JSON of a muevald before issue 52, read as none.
    public var refusals: [String: Int]

    public init(connectionsAccepted: Int = 0, connectionsRefused: Int = 0, connectionsOpen: Int = 0, eventsReceived: Int = 0, eventsStored: Int = 0, eventsDuplicate: Int = 0, eventsFiltered: Int = 0, eventsRejectedNoSession: Int = 0, eventsFailedStorage: Int = 0, malformedMessages: Int = 0, repliesDropped: Int = 0, authenticationFailures: Int = 0, bytesReceived: Int = 0,
                mediaChunksStored: Int = 0, mediaRefused: Int = 0, tlsHandshakeFailures: Int = 0, pairingRefused: Int = 0,
                refusals: [String: Int] = CounterSnapshot.noRefusals) {
        self.refusals = refusals
        self.connectionsAccepted = connectionsAccepted
        self.connectionsRefused = connectionsRefused
        self.connectionsOpen = connectionsOpen
        self.eventsReceived = eventsReceived
        self.eventsStored = eventsStored
        self.eventsDuplicate = eventsDuplicate
        self.eventsFiltered = eventsFiltered
        self.eventsRejectedNoSession = eventsRejectedNoSession
        self.eventsFailedStorage = eventsFailedStorage
        self.malformedMessages = malformedMessages
        self.repliesDropped = repliesDropped
        self.authenticationFailures = authenticationFailures
        self.bytesReceived = bytesReceived
        self.mediaChunksStored = mediaChunksStored
        self.mediaRefused = mediaRefused
        self.tlsHandshakeFailures = tlsHandshakeFailures
        self.pairingRefused = pairingRefused
    }

    private enum CodingKeys: String, CodingKey {
        case connectionsAccepted, connectionsRefused, connectionsOpen, eventsReceived, eventsStored, eventsDuplicate, eventsFiltered,
             eventsRejectedNoSession, eventsFailedStorage, malformedMessages, repliesDropped, authenticationFailures, bytesReceived,
             mediaChunksStored, mediaRefused, tlsHandshakeFailures, pairingRefused, refusals
    }

    /// Every reason at 0.
    public static let noRefusals = Dictionary(uniqueKeysWithValues: RefusalReason.allCases.map { ($0.rawValue, 0) })

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
                  pairingRefused: try count(.pairingRefused),
                  refusals: Self.noRefusals.merging(try c.decodeIfPresent([String: Int].self, forKey: .refusals) ?? [:]) { $1 })
    }
}
