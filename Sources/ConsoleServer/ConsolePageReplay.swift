internal import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import JournalStorage
internal import NIOCore
internal import PageRecording
internal import SessionModel

/// The page itself, replayed (issue 55; docs/CONSOLE.md, "The page replayed"): the records, and the empty document
/// the console builds them into.
extension ConsoleAPI {
    /// Bytes of page records per answer; the replay asks on after the last (`more`).
    static let pageRecordBytes = 4 << 20
    static let pageRecordLimit = 20_000

    func registerPageReplay(on api: RouterGroup<ConsoleContext>) {
        api.get("sessions/:session/page") { request, context in
            let record = try await find(context)
            let query = request.uri.queryParameters
            let at = try ConsoleInput.time(query.get("at").flatMap(Double.init), field: "at")
            let until = try ConsoleInput.time(query.get("until").flatMap(Double.init), field: "until")
            let after = try ConsoleInput.integer(query.get("after"), name: "after", in: 0...Int64.max)
            guard (at == nil) != (after == nil) else { throw ConsoleError.badRequest("ask for the page at a time (at=SECONDS) or after a record (after=ID)") }
            let origins = remoteAssets()
            let answer = try await blocking {
                let reader = try SessionReader(path: record.path)
                let start: Int64
                if let after {
                    start = after
                } else if let at, let snapshot = try reader.eventID(of: PageRecordClass.snapshot.rawValue, inForceAt: at) {
                    start = snapshot - 1
                } else {
                    return PageReplayResponse().json(rules: { _ in nil }, more: false, remoteAssets: origins)
                }
                let events = try reader.page(classes: PageRecordClass.names, afterID: start, until: Swift.max(until ?? at ?? 0, at ?? 0),
                                             limit: Self.pageRecordLimit, maxBytes: Self.pageRecordBytes)
                var response = PageReplayResponse(cache: (record.path, pageCache))
                for event in events { response.add(event) }
                let more = events.count == Self.pageRecordLimit || events.reduce(0) { $0 + $1.payload.utf8.count } >= Self.pageRecordBytes
                return try response.json(rules: { try reader.blob(sha256: $0) }, more: more, remoteAssets: origins)
            }
            return ConsoleResponse.json(answer)
        }
    }

    /// The origins the replay may fetch from; nil: any. Only origins as a browser writes them (`https://host:port`)
    /// go into the frame's policy, so that no setting can end a directive early.
    func remoteAssets() -> [String]? {
        switch settings.replayRemoteAssets {
        case .webOrigins: webOrigins().filter(Self.isOrigin)
        case .all: nil
        case .none: []
        }
    }

    static func isOrigin(_ text: String) -> Bool {
        guard text.hasPrefix("https://") || text.hasPrefix("http://"), text.utf8.count <= 255 else { return false }
        let rest = text.drop { $0 != "/" }.dropFirst(2)
        return !rest.isEmpty && rest.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-" || $0 == ":" || $0 == "[" || $0 == "]"
        }
    }

    /// The empty document the replay builds a page into, sandboxed by the console (no scripts, forms, popups or
    /// navigation) and here by its own policy: no script at all, images and fonts only as `replay.remote_assets` says.
    static func pageFrame(remoteAssets: [String]?) -> Response {
        let sources = (remoteAssets ?? ["https:", "http:"]).map { " " + $0 }.joined()
        let policy = "default-src 'none'; script-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'; "
            + "frame-src 'none'; connect-src 'none'; frame-ancestors 'self'; style-src 'unsafe-inline'\(sources); "
            + "img-src data:\(sources); font-src data:\(sources); media-src 'none'"
        return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .contentSecurityPolicy: policy,
                                               .cacheControl: "no-store"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: "<!doctype html><html><head></head><body></body></html>")))
    }
}
