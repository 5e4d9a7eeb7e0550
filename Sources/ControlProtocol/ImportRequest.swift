public import SessionModel

extension ControlRequest {
    /// `import`: sessions made of files recorded elsewhere (IMUT logs, GPX tracks, exports), which
    /// the client passes open after the daemon's `{"descriptors": N}` line (docs/CONTROL.md).
    public struct Import: ControlPayload {
        public typealias Reply = [ImportOutcome]
        /// The files' names, in the order of the open files passed with them.
        public var files: [String]
        /// The files come open over this connection; muevald opens no path for a client, and refuses
        /// a request without.
        public var descriptors: Bool
        /// The files' format, when not recognised from their content.
        public var format: ImportFormat?
        public var name: String?
        public var user: String?
        public var assignment: StudyAssignment?
        /// A stopped session to merge a track or log into.
        public var into: String?
        /// Import a file again that was imported before.
        public var again: Bool

        public init(files: [String], descriptors: Bool = true, format: ImportFormat? = nil, name: String? = nil, user: String? = nil,
                    assignment: StudyAssignment? = nil, into: String? = nil, again: Bool = false) {
            self.files = files
            self.descriptors = descriptors
            self.format = format
            self.name = name
            self.user = user
            self.assignment = assignment
            self.into = into
            self.again = again
        }

        public var request: ControlRequest { .import(self) }

        private enum CodingKeys: String, CodingKey { case files, descriptors, format = "importFormat", name, user, into, again }

        public init(from decoder: Decoder) throws {
            let fields = try decoder.container(keyedBy: CodingKeys.self)
            files = try fields.decode([String].self, forKey: .files)
            descriptors = try fields.decodeIfPresent(Bool.self, forKey: .descriptors) ?? false
            format = try fields.decodeChoiceIfPresent(ImportFormat.self, forKey: .format)
            name = try fields.decodeIfPresent(String.self, forKey: .name)
            user = try fields.decodeIfPresent(String.self, forKey: .user)
            assignment = try FlatAssignment.decode(from: decoder)
            into = try fields.decodeIfPresent(String.self, forKey: .into)
            again = try fields.decodeIfPresent(Bool.self, forKey: .again) ?? false
        }

        public func encode(to encoder: Encoder) throws {
            var fields = encoder.container(keyedBy: CodingKeys.self)
            try fields.encode(files, forKey: .files)
            if descriptors { try fields.encode(true, forKey: .descriptors) }
            try fields.encodeIfPresent(format, forKey: .format)
            try fields.encodeIfPresent(name, forKey: .name)
            try fields.encodeIfPresent(user, forKey: .user)
            try FlatAssignment.encode(assignment, to: encoder)
            try fields.encodeIfPresent(into, forKey: .into)
            if again { try fields.encode(true, forKey: .again) }
        }
    }
}
