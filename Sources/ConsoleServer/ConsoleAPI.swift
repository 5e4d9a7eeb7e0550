internal import BuildInfo
package import SessionCore
internal import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import JournalStorage
internal import NIOCore
internal import PageRecording
internal import NIOPosix
internal import ReplayIndex
internal import ReportCritique
internal import SessionModel
package import TesterPool
internal import WireProtocol

/// What the console works on: the daemon's own registry and counters, never a copy.
public struct ConsoleEnvironment: Sendable {
    package var registry: SessionRegistry
    package var liveTail: LiveTail
    package var counters: CaptureCounters
    /// What `muevalctl status` shows.
    package var board: StatusBoard
    package var dataDirectory: String
    /// Studies, their questionnaires and task marks: the same object the control commands use.
    package var studies: Studies
    /// Reports: the daemon writes each stopped session's, the console shows them and asks for more.
    package var reports: ConsoleReportSource
    /// The tester pool: its settings and testers (the pool page, enrolment).
    package var testers: TesterStore
    /// The capture server's limits on wrong pairing codes, in effect now: the invitation page's codes count against them too.
    package var pairingLimits: @Sendable () -> PairingLimits

    package init(registry: SessionRegistry, liveTail: LiveTail, counters: CaptureCounters, board: StatusBoard,
                 dataDirectory: String, studies: Studies, testers: TesterStore, reports: ConsoleReportSource,
                 pairingLimits: @escaping @Sendable () -> PairingLimits) {
        self.registry = registry
        self.studies = studies
        self.testers = testers
        self.pairingLimits = pairingLimits
        self.liveTail = liveTail
        self.counters = counters
        self.board = board
        self.dataDirectory = dataDirectory
        self.reports = reports
    }
}

/// The JSON API the pages call (docs/CONSOLE.md lists it). SQLite and files are read on NIO's
/// thread pool: a handler never blocks an event loop.
struct ConsoleAPI: Sendable {
    let environment: ConsoleEnvironment
    let settings: ConsoleSettings
    let rates: SessionRates
    let reports: ConsoleReports
    /// Where browsers and phones reach the console (`console.public_url`, else its address); nil before it listens.
    let publicURL: @Sendable () -> String?

    /// Events per page of `/events`, and the payload bytes one page may hold.
    /// `capture.web_origins` now (`replay.remote_assets`); none without web capture.
    var webOrigins: @Sendable () -> [String] = { [] }
    /// Sanitised page records served, kept for the next seek (`replay.page_cache_mib`).
    var pageCache = PageRecordCache(limitBytes: 0)
    static let pageLimit = 500
    static let pageBytes = 1 << 20

    func register(on router: RouterGroup<ConsoleContext>) {
        let api = router.group("api")
        api.get("me") { _, context in
            var json: [UInt8] = Array(#"{"csrf":"#.utf8)
            JSONString.append(context.login?.csrfToken ?? "", to: &json)
            json.append(contentsOf: #","version":"#.utf8)
            JSONString.append(MuEvalVersion.current, to: &json)
            json.append(UInt8(ascii: "}"))
            return ConsoleResponse.json(json)
        }
        api.get("status") { _, _ in try encode(environment.board.status()) }
        api.get("devices") { _, _ in try encode(try await blocking { try environment.registry.devices() }) }
        api.get("sessions") { _, _ in
            let records = try await blocking { try environment.registry.sessions() }
            let perSecond = rates.current
            return try encode(records.map { SessionRow(record: $0, eventsPerSecond: perSecond[$0.id] ?? 0) })
        }
        api.post("sessions") { request, context in
            let start = try await decode(StartSession.self, from: request, context: context)
            let record = try await studied {
                let study = try start.assignment()
                return try await mapped {
                    try await environment.registry.start(
                        name: start.name.nonEmpty, testUser: start.user.nonEmpty, notes: start.notes.nonEmpty,
                        sensors: start.sensors ?? [], device: start.device.nonEmpty, pairing: start.pairing == true,
                        study: study, now: Date().timeIntervalSince1970)
                }
            }
            return try encode(record, status: .created)
        }
        api.get("sessions/:session") { _, context in
            let record = try await find(context)
            let details = try await blocking {
                let reader = try SessionReader(path: record.path)
                return (try reader.devices(), try reader.gaps())
            }
            return try encode(SessionDetails(session: record, devices: details.0, gaps: details.1,
                                             report: reports.source.sessionState(record.id, ReportLocations.defaultName)))
        }
        api.post("sessions/:session/stop") { _, context in
            let key = try sessionKey(context)
            return try encode(try await mapped { try await environment.registry.stop(key, now: Date().timeIntervalSince1970) })
        }
        api.delete("sessions/:session") { _, context in
            let key = try sessionKey(context)
            // Its reports go with it: the report service follows the deletion on the lifecycle stream.
            return try encode(try await mapped { try await blocking { try environment.registry.delete(key) } })
        }
        api.post("sessions/:session/notes") { request, context in
            let key = try sessionKey(context)
            let note = try await decode(NoteRequest.self, from: request, context: context)
            let event = try await mapped {
                try await environment.registry.addNote(
                    key, text: note.text ?? "", kind: note.kind.nonEmpty ?? ObserverNote.defaultKind,
                    source: ObserverNote.Source.console.rawValue, at: try ConsoleInput.time(note.t, field: "t"), now: Date().timeIntervalSince1970)
            }
            return ConsoleResponse.json(ConsoleEvent.json(event), status: .created)
        }
        api.get("sessions/:session/events") { request, context in
            let record = try await find(context)
            let query = request.uri.queryParameters
            let after = try ConsoleInput.integer(query.get("after"), name: "after", in: 0...Int64.max) ?? 0
            // More than a page may be asked for; a page is what comes.
            let limit = min(try ConsoleInput.integer(query.get("limit"), name: "limit", in: 1...Int.max) ?? Self.pageLimit, Self.pageLimit)
            let classes = request.uri.queryParameters.get("classes").map { $0.split(separator: ",").map { String($0) } } ?? []
            let page = try await blocking {
                try SessionReader(path: record.path).page(classes: classes, afterID: after, limit: limit, maxBytes: Self.pageBytes)
            }
            var json: [UInt8] = Array(#"{"events":["#.utf8)
            for (index, event) in page.enumerated() {
                if index > 0 { json.append(UInt8(ascii: ",")) }
                json.append(contentsOf: ConsoleEvent.json(event))
            }
            json.append(contentsOf: #"],"next":"#.utf8)
            // A short page is the last one.
            if page.count == limit, let last = page.last { JSONObject.integer(last.id, to: &json) } else { json.append(contentsOf: "null".utf8) }
            json.append(UInt8(ascii: "}"))
            return ConsoleResponse.json(json)
        }
        api.get("sessions/:session/events/:event") { _, context in
            let record = try await find(context)
            guard let id = context.parameters.get("event", as: Int64.self) else { throw ConsoleError.badRequest("an event id is a number") }
            guard let event = try await blocking({ try SessionReader(path: record.path).event(id: id) }) else {
                throw ConsoleError.notFound("session \(record.id) has no event \(id)")
            }
            return ConsoleResponse.json(ConsoleEvent.json(event))
        }
        api.get("sessions/:session/blobs/:sha") { _, context in
            let record = try await find(context)
            guard let sha = BlobName(context.parameters.get("sha", as: String.self) ?? "")?.hex else {
                throw ConsoleError.badRequest("a blob is named by its lower-case hex SHA-256")
            }
            guard let bytes = try await blocking({ try SessionReader(path: record.path).blob(sha256: sha) }) else {
                throw ConsoleError.notFound("session \(record.id) has no blob \(sha)")
            }
            // Content-addressed: a blob never changes, so the browser keeps it.
            return Response(status: .ok, headers: [.contentType: Self.imageType(bytes), .cacheControl: "private, max-age=31536000, immutable"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        api.get("sessions/:session/replay") { _, context in
            let record = try await find(context)
            let file = try await reports.replayIndex(of: record)
            return ConsoleResponse.json(try await blocking { try file.wholeJSON() })
        }
        api.get("sessions/:session/replay/index") { request, context in
            let record = try await find(context)
            // A page that read the head asks for the same file: it is not made again under it.
            guard let wanted = request.headers[.ifMatch] else {
                return try await replayIndexAnswer(try await reports.replayIndex(of: record), range: request.headers[.range])
            }
            guard let file = try await reports.currentReplayIndex(of: record), file.etag == wanted else {
                var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
                headers[.cacheControl] = "no-store"
                return Response(status: .preconditionFailed, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(
                    string: #"{"error":"the replay index was made again: read its head again"}"#)))
            }
            return try await replayIndexAnswer(file, range: request.headers[.range])
        }
        api.get("report-options") { _, _ in try encode(reports.options()) }
        api.get("sessions/:session/report") { _, context in
            let record = try await find(context)
            return try encode(reports.source.sessionState(record.id, ReportLocations.defaultName))
        }
        api.post("sessions/:session/report") { request, context in
            let record = try await find(context)
            let choice = try await decode(ReportChoice.self, from: request, context: context)
            return try encode(try await reports.generate(record, choice: choice))
        }
        registerStudies(on: api)
        registerPool(on: api)
        registerMedia(on: api)
        registerPageReplay(on: api)
    }

    // MARK: Helpers

    func sessionKey(_ context: ConsoleContext) throws -> String {
        guard let key = context.parameters.get("session", as: String.self), !key.isEmpty else { throw ConsoleError.badRequest("no session given") }
        return key
    }

    func find(_ context: ConsoleContext) async throws -> SessionRecord {
        let key = try sessionKey(context)
        return try await mapped { try await blocking { try environment.registry.find(key) } }
    }

    /// Registry errors as HTTP statuses: an unknown session is a 404, a state conflict a 409.
    func mapped<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as SessionError {
            switch error {
            case .notFound: throw ConsoleError.notFound(error.description)
            case .ambiguous: throw ConsoleError.badRequest(error.description)
            case .alreadyStopped, .stillRecording, .deviceBusy, .stopping: throw ConsoleError.conflict(error.description)
            }
        } catch let error as ObserverNoteError {
            throw ConsoleError.badRequest(error.description)
        }
    }

    func decode<T: Decodable>(_ type: T.Type, from request: Request, context: ConsoleContext) async throws -> T {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: settings.maxBodyBytes)
        } catch {
            throw ConsoleError.bodyTooLarge(limit: settings.maxBodyBytes)
        }
        let data = Data(body.readableBytesView)
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw ConsoleError.badRequest(ConsoleInput.describe(error, body: data))
        }
    }

    /// Bytes of a replay index per answer to a range request: a few chunks, or a whole head.
    static let replayIndexPieceBytes: Int64 = 4 << 20

    /// The replay index file, or the range of it asked for (`ByteRangeRequest`), with its `ETag`.
    func replayIndexAnswer(_ file: ReplayIndexFile, range: String?) async throws -> Response {
        var headers: HTTPFields = [.contentType: "application/octet-stream", .cacheControl: "private, no-cache"]
        headers[.eTag] = file.etag
        return try await ByteRangeRequest.response(range, total: file.size, limit: Self.replayIndexPieceBytes, headers: headers) { range in
            try await blocking { try file.descriptor.read(range) }
        }
    }

    static func imageType(_ bytes: [UInt8]) -> String {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        return "application/octet-stream"
    }
}

/// Runs blocking work (SQLite, files) on NIO's thread pool.
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await NIOThreadPool.singleton.runIfActive(body)
}

func encode<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return ConsoleResponse.json(Array(try encoder.encode(value)), status: status)
}

/// A session in the list, with its current rate.
struct SessionRow: Encodable {
    let record: SessionRecord
    let eventsPerSecond: Double

    enum CodingKeys: String, CodingKey { case eventsPerSecond }

    func encode(to encoder: any Encoder) throws {
        try record.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(eventsPerSecond, forKey: .eventsPerSecond)
    }
}

struct SessionDetails: Encodable {
    let session: SessionRecord
    let devices: [DeviceRecord]
    let gaps: [SessionGap]
    let report: ReportState
}

/// `POST /api/sessions/ID/notes`: an observer's note; `t` is the replay's playhead in device time, absent while live.
struct NoteRequest: Decodable {
    var text: String?
    var kind: String?
    var t: Double?
}

/// `POST /api/sessions`: the fields of `muevalctl start`.
struct StartSession: Decodable {
    var name: String?
    var user: String?
    var notes: String?
    var sensors: [String]?
    var device: String?
    var pairing: Bool?
    /// A session in a study: all three, or none (as `muevalctl start --study --iteration --participant`).
    var study: String?
    var iteration: Int?
    var participant: String?

    func assignment() throws -> StudyAssignment? {
        switch (study.nonEmpty, iteration, participant.nonEmpty) {
        case (nil, nil, nil):
            return nil
        case (let study?, let iteration?, let participant?):
            return StudyAssignment(study: study, iteration: iteration, participant: participant)
        default:
            throw ConsoleError.badRequest("a session in a study needs its study, iteration and participant together")
        }
    }
}

extension Optional where Wrapped == String {
    /// An empty form field means "not given".
    var nonEmpty: String? {
        guard let value = self?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        return value
    }
}
