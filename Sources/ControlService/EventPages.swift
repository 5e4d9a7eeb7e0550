internal import ControlProtocol
internal import DequeModule
internal import Foundation
internal import JournalStorage
internal import SessionCore
internal import SessionModel

/// The commands that stream a session's contents a page at a time, so that no session has to fit
/// in memory on either side: `events`, `export` and `media` (and a tail's history).
struct EventPages: Sendable {
    let registry: SessionRegistry
    /// This lab's name, which an export gives its session record.
    let lab: String

    /// Events per page of a streamed reply, and the payload bytes after which a page ends early.
    static let pageEvents = 500
    static let pageBytes = 1 << 20

    func events(_ request: ControlRequest.Events, writer: ControlReplyWriter) async throws {
        let record = try registry.find(request.session)
        if let grep = request.grep, !grep.isEmpty {
            return try await events(record, matching: grep, request, writer: writer)
        }
        let count = try await forEachPage(of: record, classes: request.classes, last: request.limit > 0 ? request.limit : nil) { page in
            try await writer.events(page)
        }
        try await writer.succeed(request, with: EventsSummary(session: record.id, events: Int64(count)))
    }

    /// `events --grep`: the last `limit` events (0: all) whose class, device or payload contains
    /// `text` (as a tail's grep), and the transcript's speech that contains it, merged in time order.
    /// Holds at most `limit` events, however long the session.
    private func events(_ record: SessionRecord, matching text: String, _ request: ControlRequest.Events,
                        writer: ControlReplyWriter) async throws {
        let filter = TailFilter(classes: Set(request.classes), grep: text)
        let reader = try SessionReader(path: record.path)
        var speech = request.classes.isEmpty ? try reader.transcript().filter { $0.contains(text) }[...] : []
        var kept = Deque<StoredEvent>()
        var streamed = 0
        let limit = request.limit
        try await forEachPage(of: record, classes: request.classes, last: nil) { page in
            let matches = page.filter { filter.admits(.event($0, session: record.id)) }
            if limit > 0 {
                kept.append(contentsOf: matches)
                if kept.count > limit { kept.removeFirst(kept.count - limit) }
            } else {
                streamed += try await write(matches, with: &speech, writer: writer)
            }
        }
        if limit > 0 { streamed = try await write(Array(kept), with: &speech, writer: writer) }
        let spoken = Int64(speech.startIndex)
        if !speech.isEmpty { try await writer.speech(Array(speech)) }
        try await writer.succeed(request, with: EventsSummary(session: record.id, events: Int64(streamed),
                                                              speech: spoken + Int64(speech.count)))
    }

    /// Writes `events` with the speech said before each of them first; returns how many events.
    private func write(_ events: [StoredEvent], with speech: inout ArraySlice<TranscriptSegment>,
                       writer: ControlReplyWriter) async throws -> Int {
        var start = 0
        for (index, event) in events.enumerated() {
            let before = speech.prefix { $0.start <= event.timestamp }
            guard !before.isEmpty else { continue }
            if index > start { try await writer.events(Array(events[start..<index])) }
            try await writer.speech(Array(before))
            speech.removeFirst(before.count)
            start = index
        }
        if start < events.count { try await writer.events(Array(events[start...])) }
        return events.count
    }

    /// Streams the export as text chunks of about `pageBytes`.
    func export(_ request: ControlRequest.Export, writer: ControlReplyWriter) async throws {
        let record = try registry.find(request.session)
        let exporter = try JournalExporter(path: record.path, format: request.format)
        var chunk = exporter.header
        let count = try await forEachPage(of: record, classes: request.classes, last: nil) { page in
            for event in page {
                chunk += try exporter.encode(event)
                // A screenshot can be megabytes: the chunk ends as soon as it is large enough.
                if chunk.count >= Self.pageBytes {
                    try await writer.chunk(String(decoding: chunk, as: UTF8.self))
                    chunk.removeAll(keepingCapacity: true)
                }
            }
        }
        // Media, transcript and the session's own record follow the events, unless only some classes were
        // asked for; a page at a time.
        if request.classes.isEmpty {
            try await appendRest(of: record, to: &chunk, exporter: exporter, writer: writer)
        }
        try await writer.chunk(String(decoding: chunk + exporter.footer, as: UTF8.self))
        try await writer.succeed(request, with: ExportSummary(session: record.id, format: request.format, events: Int64(count)))
    }

    /// An export's media, transcript, session record and (jsonl) data values, after its events.
    private func appendRest(of record: SessionRecord, to chunk: inout [UInt8], exporter: JournalExporter,
                            writer: ControlReplyWriter) async throws {
        let reader = try SessionReader(path: record.path)
        var cursor: Int64 = 0
        while case let page = try reader.mediaPage(afterID: cursor, limit: 64, maxBytes: Self.pageBytes), let last = page.last {
            for (_, media) in page { chunk += try exporter.encode(media) }
            try await writer.chunk(String(decoding: chunk, as: UTF8.self))
            chunk.removeAll(keepingCapacity: true)
            cursor = last.id
        }
        for segment in try reader.transcript() { chunk += try exporter.encode(segment) }
        // The session itself last (readers that take every element for an event stop at the first one that is not).
        // Named with this lab, so that an import into another lab gives it a uuid of its own.
        if let session = try exporter.exportedSession(lab: lab) { chunk += try exporter.encode(session) }
        // A jsonl export names its data values by SHA-256: their bytes follow, so that it imports whole.
        guard exporter.format == .jsonl else { return }
        var blobCursor = ""
        while case let page = try reader.blobPage(after: blobCursor, limit: 64, maxBytes: Self.pageBytes), let last = page.last {
            for blob in page { chunk += try exporter.encodeBlob(sha256: blob.sha256, bytes: blob.bytes) }
            try await writer.chunk(String(decoding: chunk, as: UTF8.self))
            chunk.removeAll(keepingCapacity: true)
            blobCursor = last.sha256
        }
    }

    /// `media`: each stream of the session as one file, in pieces small enough for a reply line.
    func media(_ request: ControlRequest.Media, writer: ControlReplyWriter) async throws {
        let record = try registry.find(request.session)
        let reader = try SessionReader(path: record.path)
        let streams = try reader.mediaStreams()
        var files: [MediaSummary.File] = []
        for stream in streams {
            guard let layout = try reader.mediaLayout(device: stream.device, stream: stream.stream) else { continue }
            let file = stream.fileName(among: streams)
            var offset: Int64 = 0
            while offset < layout.totalBytes {
                let end = min(layout.totalBytes, offset + Int64(Self.pageBytes))
                let bytes = try reader.mediaBytes(layout, range: offset..<end)
                try await writer.media(MediaPiece(file: file, base64: Data(bytes).base64EncodedString()))
                offset = end
            }
            files.append(MediaSummary.File(file: file, bytes: layout.totalBytes, stream: stream))
        }
        try await writer.succeed(request, with: MediaSummary(session: record.id, files: files))
    }

    /// Reads the events of `record` (the newest `last` of them, or all) a page at a time and hands
    /// each page to `body`: `events`, `export` and a tail's history hold one page, never a session.
    @discardableResult
    func forEachPage(of record: SessionRecord, classes: [String], last: Int?,
                     _ body: ([StoredEvent]) async throws -> Void) async throws -> Int {
        let reader = try SessionReader(path: record.path)
        var cursor = try last.map { try reader.idBefore(last: $0, classes: classes) } ?? 0
        var remaining = last ?? .max
        var count = 0
        while remaining > 0 {
            let page = try reader.page(classes: classes, afterID: cursor, limit: min(remaining, Self.pageEvents),
                                       maxBytes: Self.pageBytes)
            guard let newest = page.last else { break }
            try await body(page)
            cursor = newest.id
            remaining -= page.count
            count += page.count
        }
        return count
    }
}
