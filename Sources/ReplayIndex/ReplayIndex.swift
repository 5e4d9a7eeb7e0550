package import ReportCritique
package import SessionModel

/// What the Replay page plays a session from: a file the page reads by seeking (docs/CONSOLE.md, "The
/// replay index"), written in one pass over the journal in memory bounded by a chunk, whatever the
/// session's length or time span. Like a report, it is derived from the session file and kept beside its
/// reports (`replay.index`).
///
///     preamble  64 bytes of ASCII: `mueval-replay-index VERSION SESSION_EVENTS HEAD_BYTES`, space-padded, "\n"
///     head      JSON: session, device, start, end, events, classes, chunks (offset, bytes, first event,
///               count, times, the screenshot and view in effect where the chunk begins), notes, problems, gaps
///     chunks    JSON each: `first`, the chunk's own `classes`, the columns `id`, `t`, `c` (into `classes`)
///               and `s` (one-line summary), and the chunk's screenshots, touches and views
///
/// A chunk's `offset` counts from the end of the head. Events are in storage order, as `muevalctl
/// events` lists them; those at no plausible time are left out (they have no place on the scrubber).
/// Payloads and screenshot bytes stay on the server until the page asks for them.
package enum ReplayIndex {
    /// Bumped whenever the layout changes: a file of another version is made again.
    package static let version = 2
    package static let fileName = "replay.index"
    package static let preambleBytes = 64
    /// A chunk closes after this many events or bytes, whichever comes first: what the writer holds, and
    /// what the page fetches to draw a moment.
    package static let eventsPerChunk = 1024
    static let chunkBytes = 256 << 10
    /// Class names the head lists for the page's filter; a session with more (a device's own) lists the
    /// first ones and says so (`classesComplete`), each chunk names its own.
    static let maxClassNames = 1000

    package struct Preamble: Equatable, Sendable {
        package var version: Int
        /// The session's event count when the file was written (its freshness), not only the indexed ones.
        package var sessionEvents: Int64
        package var headBytes: Int64
    }

    static func preamble(_ preamble: Preamble) -> [UInt8] {
        var line = Array("mueval-replay-index \(preamble.version) \(preamble.sessionEvents) \(preamble.headBytes)".utf8)
        line += [UInt8](repeating: UInt8(ascii: " "), count: max(0, preambleBytes - 1 - line.count))
        return line + [UInt8(ascii: "\n")]
    }

    /// The preamble of a file, or nil when the bytes are not one of any version this reader knows the shape of.
    static func preamble(from bytes: [UInt8]) -> Preamble? {
        guard bytes.count >= preambleBytes, bytes[preambleBytes - 1] == UInt8(ascii: "\n") else { return nil }
        let words = String(decoding: bytes[..<(preambleBytes - 1)], as: UTF8.self).split(separator: " ")
        guard words.count == 4, words[0] == "mueval-replay-index",
              words[1...].allSatisfy({ $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }),
              let version = Int(words[1]), let events = Int64(words[2]), let head = Int64(words[3]) else { return nil }
        return Preamble(version: version, sessionEvents: events, headBytes: head)
    }

    /// The head's JSON as read back.
    package struct Head: Decodable, Sendable {
        package struct ChunkEntry: Decodable, Sendable {
            package var offset: Int64
            package var bytes: Int64
            package var first: Int64
            package var count: Int
            package var t: Double
            package var end: Double
        }
        package struct Note: Codable, Sendable {
            package var t: Double
            package var text: String
            package var kind: String
            package var event: Int64
        }
        package var version: Int
        package var session: SessionRecord
        package var device: DeviceRecord?
        package var start: Double
        package var end: Double
        package var events: Int64
        package var classes: [String]
        package var classesComplete: Bool
        package var chunks: [ChunkEntry]
        package var notes: [Note]
        package var problems: [ProblemMark]
        package var gaps: [SessionGap]
    }

    /// A chunk's JSON as read back.
    package struct Chunk: Decodable, Sendable {
        package struct Screenshot: Codable, Sendable { package var t: Double; package var sha: String; package var event: Int64 }
        package struct Touch: Codable, Sendable { package var t: Double; package var x: Double; package var y: Double; package var phase: String }
        package struct View: Codable, Sendable { package var t: Double; package var view: String }
        package var first: Int64
        package var classes: [String]
        package var id: [Int64]
        package var t: [Double]
        package var c: [Int]
        package var s: [String]
        package var screenshots: [Screenshot]
        package var touches: [Touch]
        package var views: [View]
    }
}
