
/// One line of a live tail (thesis 2.4.1, "Live preview for collected events"): a stored event,
/// a marker in a session's life, or a note that a slow reader missed events.
public struct TailLine: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case event
        case sessionStarted = "session-started"
        case sessionStopped = "session-stopped"
        case deviceConnected = "device-connected"
        case deviceDisconnected = "device-disconnected"
        /// `count` events did not fit the reader's buffer and were left out.
        case skipped
        /// Speech recognised in a session's think-aloud audio (`speech`), once its transcription is done.
        case speech
        /// The daemon shuts down: no more lines follow.
        case daemonStopping = "daemon-stopping"
    }

    public var kind: Kind
    public var session: Int64?
    /// When it happened (seconds since 1970): the receive time for events.
    public var time: Double
    public var device: String?
    public var event: StoredEvent?
    public var count: Int?
    public var detail: String?
    public var speech: TranscriptSegment?

    public init(kind: Kind, session: Int64? = nil, time: Double, device: String? = nil, event: StoredEvent? = nil,
                count: Int? = nil, detail: String? = nil, speech: TranscriptSegment? = nil) {
        self.kind = kind
        self.session = session
        self.time = time
        self.device = device
        self.event = event
        self.count = count
        self.detail = detail
        self.speech = speech
    }

    public static func event(_ event: StoredEvent, session: Int64) -> TailLine {
        TailLine(kind: .event, session: session, time: event.received, device: event.device, event: event)
    }

    /// At the device time it was said.
    public static func speech(_ segment: TranscriptSegment, session: Int64) -> TailLine {
        TailLine(kind: .speech, session: session, time: segment.start, device: segment.device, speech: segment)
    }
}
