public import SessionModel

// The payloads of the commands on sessions and the daemon (docs/CONTROL.md's table lists their keys).

extension ControlRequest {
    /// `start`: a session that records when its device (or the next device) connects.
    public struct StartSession: ControlPayload {
        public typealias Reply = SessionRecord
        public var name: String?
        /// Bind the session to this device id; without it the next device that connects claims it.
        public var device: String?
        public var user: String?
        public var notes: String?
        /// Event classes or sensors to record; none: all.
        public var sensors: [String]
        /// Give the session a pairing code its device must present.
        public var pairing: Bool
        public var assignment: StudyAssignment?

        public init(name: String? = nil, device: String? = nil, user: String? = nil, notes: String? = nil, sensors: [String] = [],
                    pairing: Bool = false, assignment: StudyAssignment? = nil) {
            self.name = name
            self.device = device
            self.user = user
            self.notes = notes
            self.sensors = sensors
            self.pairing = pairing
            self.assignment = assignment
        }

        public var request: ControlRequest { .start(self) }

        private enum CodingKeys: String, CodingKey { case name, device, user, notes, sensors, pairing }

        public init(from decoder: Decoder) throws {
            let fields = try decoder.container(keyedBy: CodingKeys.self)
            name = try fields.decodeIfPresent(String.self, forKey: .name)
            device = try fields.decodeIfPresent(String.self, forKey: .device)
            user = try fields.decodeIfPresent(String.self, forKey: .user)
            notes = try fields.decodeIfPresent(String.self, forKey: .notes)
            sensors = try fields.decodeIfPresent([String].self, forKey: .sensors) ?? []
            pairing = try fields.decodeIfPresent(Bool.self, forKey: .pairing) ?? false
            assignment = try FlatAssignment.decode(from: decoder)
        }

        public func encode(to encoder: Encoder) throws {
            var fields = encoder.container(keyedBy: CodingKeys.self)
            try fields.encodeIfPresent(name, forKey: .name)
            try fields.encodeIfPresent(device, forKey: .device)
            try fields.encodeIfPresent(user, forKey: .user)
            try fields.encodeIfPresent(notes, forKey: .notes)
            if !sensors.isEmpty { try fields.encode(sensors, forKey: .sensors) }
            if pairing { try fields.encode(true, forKey: .pairing) }
            try FlatAssignment.encode(assignment, to: encoder)
        }
    }

    /// `stop`: commits a session's events (or every open session's) and finalises its file.
    public struct StopSessions: ControlPayload {
        public typealias Reply = [SessionRecord]
        public var sessions: SessionSelection

        public init(_ sessions: SessionSelection) {
            self.sessions = sessions
        }

        public init(session: String) {
            self.init(.session(session))
        }

        public var request: ControlRequest { .stop(self) }

        public init(from decoder: Decoder) throws {
            sessions = try SessionSelection(from: decoder)
        }

        public func encode(to encoder: Encoder) throws {
            try sessions.encode(to: encoder)
        }
    }

    /// `status`: the daemon at a glance.
    public struct Status: ControlPayload {
        public typealias Reply = StatusReport
        public init() {}
        public var request: ControlRequest { .status(self) }
    }

    /// `sessions`: every session, open and stopped.
    public struct ListSessions: ControlPayload {
        public typealias Reply = [SessionRecord]
        public init() {}
        public var request: ControlRequest { .sessions(self) }
    }

    /// `devices`: every device that has connected.
    public struct ListDevices: ControlPayload {
        public typealias Reply = [DeviceRecord]
        public init() {}
        public var request: ControlRequest { .devices(self) }
    }

    /// `delete`: a stopped session and its file.
    public struct DeleteSession: ControlPayload {
        public typealias Reply = SessionRecord
        /// A session id or name.
        public var session: String

        public init(session: String) {
            self.session = session
        }

        public var request: ControlRequest { .delete(self) }
    }

    /// `note`: an observer's note in a session, open or stopped; answered with the stored event.
    public struct AddNote: ControlPayload {
        public typealias Reply = StoredEvent
        public var session: String
        public var text: String
        /// note (the default), problem, quote, task-done or a label of one's own.
        public var kind: String?

        public init(session: String, text: String, kind: String? = nil) {
            self.session = session
            self.text = text
            self.kind = kind
        }

        public var request: ControlRequest { .note(self) }
    }

    /// `console`: a single-use login link to the web console.
    public struct ConsoleLogin: ControlPayload {
        public typealias Reply = ConsoleLink
        public init() {}
        public var request: ControlRequest { .console(self) }
    }

    /// `transcribe`: queues a stopped session's audio for transcription (again).
    public struct Transcribe: ControlPayload {
        public typealias Reply = [SessionTranscription]
        public var session: String

        public init(session: String) {
            self.session = session
        }

        public var request: ControlRequest { .transcribe(self) }
    }
}
