internal import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import JournalStorage
internal import NIOCore
internal import SessionModel
internal import WireProtocol

/// The media calls of the JSON API (docs/CONSOLE.md, "Media"): a session's streams with its transcript,
/// and each stream as one playable file, in byte ranges for the replay's <audio> and <video>.
extension ConsoleAPI {
    /// Bytes per answer to a range request (about 30 s of 16 kHz WAV).
    static let mediaPieceBytes: Int64 = 1 << 20

    struct MediaOverview: Encodable {
        struct Stream: Encodable {
            let stream: MediaStreamRecord
            /// Where the file is served.
            let url: String
        }

        let streams: [Stream]
        let transcript: [TranscriptSegment]
        let transcription: [TranscriptionStatus]
    }

    /// Quotes one search answers with: enough to pick from, bounded however many sessions match.
    static let searchLimit = 100

    /// One quote a search found: what was said, when, in which session.
    struct Quote: Encodable {
        let session: Int64
        let name: String
        let user: String?
        let segment: TranscriptSegment
    }

    struct SearchAnswer: Encodable {
        let query: String
        let quotes: [Quote]
        /// More quotes matched than `searchLimit`.
        let truncated: Bool
    }

    func registerMedia(on api: RouterGroup<ConsoleContext>) {
        // What testers said, across sessions, newest session first: the sessions page's search.
        api.get("search") { request, _ in
            let query = (request.uri.queryParameters.get("q") ?? "").trimmingCharacters(in: .whitespaces)
            guard !query.isEmpty else { throw ConsoleError.badRequest("search for what? (?q=TEXT)") }
            let answer = try await blocking { () throws -> SearchAnswer in
                var quotes: [Quote] = []
                for record in try environment.registry.sessions().sorted(by: { $0.id > $1.id }) {
                    // A session whose file is gone or unreadable has nothing to find: the others still answer.
                    guard let transcript = try? SessionReader(path: record.path).transcript() else { continue }
                    for segment in transcript where segment.contains(query) {
                        guard quotes.count < Self.searchLimit else { return SearchAnswer(query: query, quotes: quotes, truncated: true) }
                        quotes.append(Quote(session: record.id, name: record.name, user: record.testUser, segment: segment))
                    }
                }
                return SearchAnswer(query: query, quotes: quotes, truncated: false)
            }
            return try encode(answer)
        }
        api.get("sessions/:session/media") { _, context in
            let record = try await find(context)
            let overview = try await blocking { () throws -> MediaOverview in
                let reader = try SessionReader(path: record.path)
                let streams = try reader.mediaStreams()
                return MediaOverview(
                    streams: streams.map { stream in
                        let device = stream.device.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? ""
                        let name = stream.stream.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? ""
                        return .init(stream: stream, url: "/api/sessions/\(record.id)/media/\(device)/\(name)")
                    },
                    transcript: try reader.transcript(), transcription: try reader.transcriptionStatus())
            }
            return try encode(overview)
        }
        api.get("sessions/:session/media/:device/:stream") { request, context in
            let record = try await find(context)
            let device = context.parameters.get("device", as: String.self)?.removingPercentEncoding ?? ""
            let stream = context.parameters.get("stream", as: String.self)?.removingPercentEncoding ?? ""
            let rangeHeader = request.headers[.range]
            let layout = try await blocking { () throws -> MediaStreamLayout in
                guard let layout = try SessionReader(path: record.path).mediaLayout(device: device, stream: stream) else {
                    throw ConsoleError.notFound("session \(record.id) has no stream \(stream) of device \(device)")
                }
                return layout
            }
            let path = record.path
            return try await ByteRangeRequest.response(
                rangeHeader, total: layout.totalBytes, limit: Self.mediaPieceBytes,
                headers: [.contentType: layout.stream.contentType, .cacheControl: "private, no-cache"]) { range in
                try await blocking { try SessionReader(path: path).mediaBytes(layout, range: range) }
            }
        }
    }
}
