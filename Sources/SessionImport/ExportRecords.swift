internal import MuEvalWire
internal import SessionModel
internal import WireProtocol

/// What both export formats carry besides events, and the checks they share: the session record
/// first, `data` values all present at the end.
struct ExportRecords {
    let context: ImportContext
    var exported: ExportedSession?
    /// Blob names events refer to, with where the first reference is; and those the file brought.
    var referenced: [String: ImportError.Position] = [:]
    var referencedInOrder: [String] = []
    var carried: Set<String> = []
    var sawEvent = false

    mutating func session(_ session: ExportedSession, at position: ImportError.Position, into draft: SessionDraft) throws {
        guard exported == nil else {
            throw ImportError(file: context.file, at: position, "a second session record: the file is two exports run together")
        }
        guard session.version <= ExportedSession.currentVersion else {
            throw ImportError(file: context.file, at: position, "an export of version \(session.version), made by a newer muEval; this one reads up to \(ExportedSession.currentVersion)")
        }
        try checkRanges(of: session, at: position)
        exported = session
        for device in session.devices { try draft.addDevice(device) }
        for gap in session.gaps { try draft.addGap(gap) }
        if let study = session.study { try draft.addStudyContext(study) }
    }

    mutating func event(_ event: WireEvent, device: String, received: Double, at position: ImportError.Position, into draft: SessionDraft) throws {
        sawEvent = true
        do {
            try draft.add(event, device: device, received: received)
        } catch DraftLimit.tooManyEvents {
            throw ImportError(file: context.file, at: position, "more events than import.max-events (\(context.limits.maxEvents)); raise it in muevald's configuration")
        }
        try draft.flushIfFull()
    }

    /// A record with a value outside its range (docs/PROTOCOL.md, "Value ranges") refuses the file, as
    /// any bad record does. Imports check with the default ranges, as analysis reads: a file means
    /// the same wherever it goes, whatever one daemon's `limits.*` say.
    func check(_ problem: ValueRangeProblem?, at position: ImportError.Position, _ record: String) throws {
        if let problem { throw ImportError(file: context.file, at: position, "\(record): \(problem.description)") }
    }

    /// The session's own times, and its devices' times and screens.
    private func checkRanges(of session: ExportedSession, at position: ImportError.Position) throws {
        let ranges = ValueRanges.default
        var times: [(field: String, time: Double?)] = [("created", session.created), ("started", session.started), ("stopped", session.stopped)]
        for (index, gap) in session.gaps.enumerated() { times += [("gaps[\(index)].start", gap.start), ("gaps[\(index)].end", gap.end)] }
        for (index, device) in session.devices.enumerated() {
            times += [("devices[\(index)].firstSeen", device.firstSeen), ("devices[\(index)].lastSeen", device.lastSeen)]
            try check(ranges.problem(screenWidth: device.screenWidth, screenHeight: device.screenHeight, screenScale: device.screenScale),
                      at: position, "the session record's devices[\(index)]")
        }
        for (field, time) in times {
            try check(time.flatMap { ranges.problem($0, as: .time, at: field) }, at: position, "the session record")
        }
    }

    func check(_ media: WireMedia, received: Double, at position: ImportError.Position) throws {
        let ranges = ValueRanges.default
        try check(ranges.problem(in: media) ?? ranges.problem(received, as: .time, at: "received"), at: position, "a media record")
    }

    func check(_ segment: TranscriptSegment, at position: ImportError.Position) throws {
        let ranges = ValueRanges.default
        try check(ranges.problem(segment.start, as: .time, at: "start") ?? ranges.problem(segment.end, as: .time, at: "end")
                  ?? ranges.problem(segment.end - segment.start, as: .duration, at: "end - start"), at: position, "a speech record")
    }

    /// Notes the blobs a payload names, with where the first mention of each is.
    mutating func noteBlobs(in payload: UnsafeBufferPointer<UInt8>, at position: ImportError.Position) {
        for sha in TypedJSON.blobReferences(in: payload) where referenced[sha] == nil {
            referenced[sha] = position
            referencedInOrder.append(sha)
        }
    }

    func checkBlobs() throws {
        for sha in referencedInOrder where !carried.contains(sha) {
            throw ImportError(file: context.file, at: referenced[sha], "the event refers to data \(sha) that the file does not carry (was it exported with --class?)")
        }
    }
}
