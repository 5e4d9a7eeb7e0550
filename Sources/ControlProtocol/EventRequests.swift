public import SessionModel

// The payloads of the commands that stream a session's contents before their final line.

extension ControlRequest {
    /// `events`: pages `{"events":[…]}` (and `{"speech":[…]}` with `grep`), then the count.
    public struct Events: ControlPayload {
        public typealias Reply = EventsSummary
        public var session: String
        /// Only events of these classes; none: all.
        public var classes: [String]
        /// The newest N events; 0: all.
        public var limit: Int
        /// Only events whose class, device or payload contains this text, and the transcript's
        /// speech that contains it (any case).
        public var grep: String?

        public static let defaultLimit = 100

        public init(session: String, classes: [String] = [], limit: Int = Self.defaultLimit, grep: String? = nil) {
            self.session = session
            self.classes = classes
            self.limit = limit
            self.grep = grep
        }

        public var request: ControlRequest { .events(self) }

        private enum CodingKeys: String, CodingKey { case session, classes, limit, grep }

        public init(from decoder: Decoder) throws {
            let fields = try decoder.container(keyedBy: CodingKeys.self)
            session = try fields.decode(String.self, forKey: .session)
            classes = try fields.decodeIfPresent([String].self, forKey: .classes) ?? []
            limit = try fields.decodeIfPresent(Int.self, forKey: .limit) ?? Self.defaultLimit
            grep = try fields.decodeIfPresent(String.self, forKey: .grep)
        }
    }

    /// `export`: chunks of a plist or JSON lines, then the count.
    public struct Export: ControlPayload {
        public typealias Reply = ExportSummary
        public var session: String
        public var format: ExportFormat
        /// Only events of these classes, and then no media, transcript or session record; none: all.
        public var classes: [String]

        public init(session: String, format: ExportFormat = .plist, classes: [String] = []) {
            self.session = session
            self.format = format
            self.classes = classes
        }

        public var request: ControlRequest { .export(self) }

        private enum CodingKeys: String, CodingKey { case session, format, classes }

        public init(from decoder: Decoder) throws {
            let fields = try decoder.container(keyedBy: CodingKeys.self)
            session = try fields.decode(String.self, forKey: .session)
            format = try fields.decodeChoiceIfPresent(ExportFormat.self, forKey: .format) ?? .plist
            classes = try fields.decodeIfPresent([String].self, forKey: .classes) ?? []
        }
    }

    /// `tail`: tail lines as events are stored, until the session stops (or, for all, the client hangs up).
    public struct Tail: ControlPayload {
        public typealias Reply = Empty
        public var sessions: SessionSelection
        public var classes: [String]
        /// Only events of this device id.
        public var device: String?
        public var grep: String?
        /// First the last N stored events.
        public var since: Int?

        public init(_ sessions: SessionSelection, classes: [String] = [], device: String? = nil, grep: String? = nil, since: Int? = nil) {
            self.sessions = sessions
            self.classes = classes
            self.device = device
            self.grep = grep
            self.since = since
        }

        public var request: ControlRequest { .tail(self) }

        private enum CodingKeys: String, CodingKey { case classes, device, grep, since }

        public init(from decoder: Decoder) throws {
            let fields = try decoder.container(keyedBy: CodingKeys.self)
            sessions = try SessionSelection(from: decoder)
            classes = try fields.decodeIfPresent([String].self, forKey: .classes) ?? []
            device = try fields.decodeIfPresent(String.self, forKey: .device)
            grep = try fields.decodeIfPresent(String.self, forKey: .grep)
            since = try fields.decodeIfPresent(Int.self, forKey: .since)
        }

        public func encode(to encoder: Encoder) throws {
            try sessions.encode(to: encoder)
            var fields = encoder.container(keyedBy: CodingKeys.self)
            if !classes.isEmpty { try fields.encode(classes, forKey: .classes) }
            try fields.encodeIfPresent(device, forKey: .device)
            try fields.encodeIfPresent(grep, forKey: .grep)
            try fields.encodeIfPresent(since, forKey: .since)
        }
    }

    /// `media`: each media stream of a session as one file, in `{"media":…}` pieces.
    public struct Media: ControlPayload {
        public typealias Reply = MediaSummary
        public var session: String

        public init(session: String) {
            self.session = session
        }

        public var request: ControlRequest { .media(self) }
    }
}
