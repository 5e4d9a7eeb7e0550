import Foundation
import Glibc

/// A reader that stamps each event's arrival against the `received` muevald stored with it.
protocol ArrivalReader: AnyObject {
    var fd: Int32 { get }
    /// Receipt (`received`) to arrival here, in seconds, per event.
    var delays: [Double] { get }
    /// Events the server left out for this reader, as it reported them.
    var skipped: Int { get }
    func read(now: Double)
    func close()
}

/// The web console as a browser uses it, over plain sockets: the login link's cookie, GETs, and the
/// live stream's WebSocket (docs/CONSOLE.md).
enum ConsoleHTTP {
    /// Follows a login link (what `muevalctl console --json` prints as `url`); returns the cookie.
    static func login(link: String, port: UInt16) throws -> String {
        guard let url = URL(string: link), let query = url.query else { throw BenchError("not a login link: \(link)") }
        let reply = try get(port: port, path: url.path + "?" + query)
        guard reply.status == 303, let cookie = reply.headers.lazy.compactMap({ Self.cookie(in: $0) }).first else {
            throw BenchError("the console's login answered \(reply.status) without its cookie")
        }
        return cookie
    }

    /// The value of `mueval_console` in a `Set-Cookie` header line.
    private static func cookie(in header: String) -> String? {
        guard header.lowercased().hasPrefix("set-cookie:") else { return nil }
        let value = header.dropFirst("set-cookie:".count).trimmingCharacters(in: .whitespaces)
        guard value.hasPrefix("mueval_console=") else { return nil }
        return String(value.dropFirst("mueval_console=".count).prefix { $0 != ";" })
    }

    /// One GET with `Connection: close` (and `headers`, "Name: value" each), read to the end.
    static func get(port: UInt16, path: String, cookie: String? = nil, headers: [String] = []) throws -> (status: Int, headers: [String], body: [UInt8]) {
        let fd = try Sockets.connect(port: port)
        defer { Glibc.close(fd) }
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let cookie { request += "Cookie: mueval_console=\(cookie)\r\n" }
        for header in headers { request += header + "\r\n" }
        try Sockets.writeAll(fd, Array((request + "\r\n").utf8))
        var received: [UInt8] = []
        try Sockets.read(fd, into: &received, deadline: wallClock() + 30) { _ in false }
        guard let end = received.firstRange(of: Array("\r\n\r\n".utf8)) else { throw BenchError("no HTTP reply to GET \(path)") }
        let lines = String(decoding: received[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        return (status, Array(lines.dropFirst()), Array(received[end.upperBound...]))
    }
}

/// A WebSocket on the console's live stream of one session, over a raw socket: the upgrade, then
/// frames parsed as they arrive. It answers pings; it never sends anything else. A reader that is
/// never asked to read is the stalled browser of issue 15.
final class LiveReader: ArrivalReader {
    let fd: Int32
    private(set) var delays: [Double] = []
    private(set) var skipped = 0
    private(set) var closed = false
    private var pending: [UInt8] = []
    private var message: [UInt8] = []
    private var scratch = [UInt8](repeating: 0, count: 1 << 16)

    /// Upgrades `/api/sessions/SESSION/live` and waits for the 101. `receiveBuffer` shrinks SO_RCVBUF.
    init(port: UInt16, session: Int64, cookie: String, receiveBuffer: Int32? = nil) throws {
        fd = try Sockets.connect(port: port, receiveBuffer: receiveBuffer)
        let request = "GET /api/sessions/\(session)/live HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: bXVldmFsYmVuY2gtbGl2ZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Cookie: mueval_console=\(cookie)\r\n\r\n"
        do {
            try Sockets.writeAll(fd, Array(request.utf8))
            let separator = Array("\r\n\r\n".utf8)
            try Sockets.read(fd, into: &pending, deadline: wallClock() + 10) { $0.firstRange(of: separator) != nil }
            guard let end = pending.firstRange(of: separator) else { throw BenchError("the live WebSocket's upgrade got no answer") }
            let head = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
            guard head.hasPrefix("HTTP/1.1 101") else { throw BenchError("the live WebSocket was refused: \(head.prefix(80))") }
            pending.removeFirst(end.upperBound)
        } catch {
            Glibc.close(fd)
            throw error
        }
        delays.reserveCapacity(1 << 20)
        parse(now: wallClock())
    }

    func read(now: Double) {
        while true {
            let count = scratch.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { closed = true }
            if count <= 0 { break }
            pending += scratch[..<count]
        }
        parse(now: now)
    }

    func close() { Glibc.close(fd) }

    /// Takes every whole frame out of `pending` (servers do not mask; RFC 6455 section 5.2).
    private func parse(now: Double) {
        var offset = 0
        while pending.count - offset >= 2 {
            let (first, second) = (pending[offset], pending[offset + 1])
            var length = Int(second & 0x7F)
            var header = 2
            if length == 126 {
                guard pending.count - offset >= 4 else { break }
                length = Int(pending[offset + 2]) << 8 | Int(pending[offset + 3])
                header = 4
            } else if length == 127 {
                guard pending.count - offset >= 10 else { break }
                length = pending[(offset + 2)..<(offset + 10)].reduce(0) { $0 << 8 | Int($1) }
                header = 10
            }
            guard pending.count - offset >= header + length else { break }
            let payload = pending[(offset + header)..<(offset + header + length)]
            offset += header + length
            switch first & 0x0F {
            case 0x0, 0x1:
                message += payload
                if first & 0x80 != 0 {
                    handle(now: now)
                    message.removeAll(keepingCapacity: true)
                }
            case 0x8: closed = true
            case 0x9: try? Sockets.writeAll(fd, [0x8A, 0x80 | UInt8(payload.count), 0, 0, 0, 0] + payload)  // pong, zero mask
            default: break
            }
        }
        pending.removeFirst(offset)
    }

    /// `events`: a delay per `received`; `skipped`: its count; the hello (events from before) and markers are not stamped.
    private func handle(now: Double) {
        message.withUnsafeBytes { buffer in
            if ByteScan.find(Self.eventsType, in: buffer) != nil {
                var from = 0
                while let start = ByteScan.find(Self.received, in: buffer, from: from) {
                    if let received = ByteScan.number(at: start, in: buffer) { delays.append(now - received) }
                    from = start
                }
            } else if ByteScan.find(Self.skippedType, in: buffer) != nil, let start = ByteScan.find(Self.count, in: buffer),
                      let count = ByteScan.number(at: start, in: buffer) {
                skipped += Int(count)
            }
        }
    }

    private static let eventsType = Array(#"{"type":"events""#.utf8)
    private static let skippedType = Array(#"{"type":"skipped""#.utf8)
    private static let received = Array(#""received":"#.utf8)
    private static let count = Array(#""count":"#.utf8)
}

/// Searches in bytes with memchr and memcmp: a benchmark's reader must keep up with 50,000 events/s.
enum ByteScan {
    /// The offset just past the first `key` at or after `from`.
    static func find(_ key: [UInt8], in bytes: UnsafeRawBufferPointer, from: Int = 0) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var offset = from
        while offset + key.count <= bytes.count, let hit = memchr(base + offset, Int32(key[0]), bytes.count - offset - key.count + 1) {
            let at = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(base + at, key, key.count) == 0 { return at + key.count }
            offset = at + 1
        }
        return nil
    }

    /// The JSON number starting at `start`.
    static func number(at start: Int, in bytes: UnsafeRawBufferPointer) -> Double? {
        let digits = bytes[start...].prefix { $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: "}") }
        return Double(String(decoding: digits, as: UTF8.self))
    }

    static func number(after key: [UInt8], in bytes: UnsafeRawBufferPointer) -> Double? {
        find(key, in: bytes).flatMap { number(at: $0, in: bytes) }
    }
}
