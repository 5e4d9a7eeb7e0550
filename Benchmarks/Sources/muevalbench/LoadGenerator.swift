import BenchProfiles
import Glibc

/// What one run sends and when it is over.
struct LoadPlan {
    var profile: LoadProfile
    var connections: Int
    var eventsPerConnection: Int
    /// Events per second over all connections; nil: as fast as the server reads.
    var rate: Double?
    /// muevald: done when every event is acknowledged (durable). The sink: done when it has read everything.
    var untilAcknowledged: Bool
    /// Readers that follow the sessions while the load runs, stamping each event's arrival.
    var follow: [Follower] = []
    var timeout: Double
    /// Distinct devices: connection i says hello as device `i % devices` (`LoadGenerator.deviceID`).
    var devices = 1
}

/// A reader of stored events as they are committed.
enum Follower {
    /// The control socket's `tail` of a session (what `muevalctl tail --json` reads).
    case tail(socket: String, session: Int64)
    /// The web console's live stream of a session, logged in with `cookie`.
    case live(port: UInt16, session: Int64, cookie: String)

    func open() throws -> any ArrivalReader {
        switch self {
        case .tail(let socket, let session): try TailReader(socket: socket, session: session)
        case .live(let port, let session, let cookie): try LiveReader(port: port, session: session, cookie: cookie)
        }
    }
}

/// When each connection learnt that its events up to a seq were durable.
struct AckPoint {
    var count: Int
    var time: Double
}

struct LoadOutcome {
    var start = 0.0
    var end = 0.0
    var bytes = 0
    var events = 0
    var acks: [[AckPoint]] = []
    var errors: [String] = []
    /// Receipt (`received`) to arrival at the followers, in seconds, per event.
    var tailDelays: [Double] = []
    var tailSkipped = 0
    var timedOut = false
}

/// One simulated device connection: writes numbered events from the profile, reads its replies.
/// Seqs are `(index + 1) << 32 + n`, so that many connections of one device never collide in
/// the session's (device, seq) de-duplication, and a stored seq names its connection.
private final class DeviceLoad {
    let fd: Int32
    let index: Int
    let total: Int
    var generated = 0
    var out: [UInt8] = []
    var offset = 0
    var acked = 0
    var acks: [AckPoint] = []
    var replies: [UInt8] = []
    var peerClosed = false
    var shutDown = false
    var pollingOut = false

    init(fd: Int32, index: Int, total: Int) {
        self.fd = fd
        self.index = index
        self.total = total
        out.reserveCapacity(Self.chunk + 65536)
    }

    static let chunk = 256 * 1024
    var seqBase: Int64 { Int64(index + 1) << 32 }
    var finishedWriting: Bool { generated == total && offset == out.count }

    /// Writes events up to number `due` until the socket is full; false when it is.
    func pump(profile: LoadProfile, due: Int, sent bytes: inout Int) -> Bool {
        while true {
            if offset == out.count {
                out.removeAll(keepingCapacity: true)
                offset = 0
                while generated < due, out.count < Self.chunk {
                    profile.write(index: generated + index * 7, seq: seqBase + Int64(generated + 1), into: &out)
                    generated += 1
                }
                if out.isEmpty { return true }
            }
            let written = out[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written > 0 {
                offset += written
                bytes += written
            } else if written < 0, errno == EAGAIN || errno == EINTR {
                return errno == EINTR ? pump(profile: profile, due: due, sent: &bytes) : false
            } else {
                peerClosed = true
                return true
            }
        }
    }

    /// Reads replies; acks move `acked`, errors are kept for the report.
    func readReplies(scratch: inout [UInt8], now: Double, errors: inout [String]) {
        while true {
            let count = scratch.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) {
                peerClosed = true
                return
            }
            if count < 0 { break }
            replies += scratch[..<count]
        }
        var lineStart = 0
        while let newline = replies[lineStart...].firstIndex(of: UInt8(ascii: "\n")) {
            let line = replies[lineStart..<newline]
            lineStart = newline + 1
            if line.starts(with: Self.ack), let seq = Self.integer(in: line) {
                let count = Int(seq - seqBase)
                if count > acked {
                    acked = count
                    acks.append(AckPoint(count: count, time: now))
                }
            } else if line.starts(with: Self.error), errors.count < 5 {
                errors.append(String(decoding: line, as: UTF8.self))
            }
        }
        replies.removeFirst(lineStart)
    }

    private static let ack = Array("<ack>".utf8)
    private static let error = Array("<error>".utf8)
    private static let integerTag = Array("<integer>".utf8)

    private static func integer(in line: ArraySlice<UInt8>) -> Int64? {
        guard let start = line.firstRange(of: integerTag)?.upperBound else { return nil }
        var value: Int64 = 0
        for byte in line[start...] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { break }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return value
    }
}

/// Drives every connection of a run from one thread with poll(2), so that the sender costs as
/// little CPU as possible: bytes are copied from templates, never encoded.
enum LoadGenerator {
    static let hello = hello(device: 0)
    /// The id of device `index` of a run: one device is "bench-device", as it always was.
    static func deviceID(_ index: Int) -> String { index == 0 ? "bench-device" : "bench-device-\(index)" }
    static func hello(device index: Int) -> [UInt8] {
        Array("<hello><key>deviceId</key><string>\(deviceID(index))</string></hello>\n".utf8)
    }

    static func run(_ plan: LoadPlan, port: UInt16) throws -> LoadOutcome {
        var outcome = LoadOutcome()
        var devices: [DeviceLoad] = []
        defer { devices.forEach { close($0.fd) } }
        for index in 0..<plan.connections {
            let fd = try Sockets.connect(port: port, source: UInt8(1 + index % 4))
            devices.append(DeviceLoad(fd: fd, index: index, total: plan.eventsPerConnection))
            try Sockets.writeAll(fd, hello(device: index % max(plan.devices, 1)))
        }
        var scratch = [UInt8](repeating: 0, count: 1 << 16)
        if plan.untilAcknowledged { try awaitWelcomes(devices, scratch: &scratch) }

        var followers: [any ArrivalReader] = []
        defer { followers.forEach { $0.close() } }
        for follower in plan.follow { followers.append(try follower.open()) }
        // One poll entry per connection, then the followers'.
        var polled = devices.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        polled += followers.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }

        outcome.start = wallClock()
        let deadline = outcome.start + plan.timeout
        var now = outcome.start
        func due() -> Int {
            guard let rate = plan.rate else { return plan.eventsPerConnection }
            return min(plan.eventsPerConnection, Int((now - outcome.start) * rate / Double(plan.connections)))
        }
        // Flat out, every socket is polled for writing until done; rate-limited, only while one is full.
        for device in devices where plan.rate == nil { device.pollingOut = true }
        while true {
            for device in devices {
                polled[device.index].events = Int16(POLLIN) | (device.pollingOut ? Int16(POLLOUT) : 0)
            }
            let ready = poll(&polled, nfds_t(polled.count), plan.rate == nil ? 50 : 1)
            now = wallClock()
            if ready > 0 {
                for (offset, follower) in followers.enumerated() where polled[devices.count + offset].revents != 0 {
                    follower.read(now: now)
                }
                for device in devices where polled[device.index].revents != 0 {
                    let revents = Int32(polled[device.index].revents)
                    if revents & (POLLIN | POLLHUP | POLLERR) != 0 {
                        device.readReplies(scratch: &scratch, now: now, errors: &outcome.errors)
                    }
                    if revents & POLLOUT != 0 {
                        _ = device.pump(profile: plan.profile, due: due(), sent: &outcome.bytes)
                    }
                }
            }
            for device in devices {
                if plan.rate != nil, !device.pollingOut, !device.pump(profile: plan.profile, due: due(), sent: &outcome.bytes) {
                    device.pollingOut = true
                }
                if device.pollingOut, device.finishedWriting || (plan.rate != nil && device.offset == device.out.count) {
                    device.pollingOut = false
                }
                if !plan.untilAcknowledged, device.finishedWriting, !device.shutDown {
                    device.shutDown = true
                    shutdown(device.fd, Int32(SHUT_WR))
                }
            }
            let done = plan.untilAcknowledged ? devices.allSatisfy { $0.acked == $0.total } : devices.allSatisfy(\.peerClosed)
            if done || now > deadline {
                outcome.timedOut = !done
                break
            }
            if plan.untilAcknowledged, let broken = devices.first(where: \.peerClosed) {
                throw BenchError("muevald closed connection \(broken.index): \(outcome.errors.first ?? "no error reply")")
            }
        }
        outcome.end = now
        outcome.events = devices.reduce(0) { $0 + $1.generated }
        outcome.acks = devices.map(\.acks)
        // Followers trail commits by a few milliseconds: let them catch up with the last ones.
        if !followers.isEmpty {
            let total = devices.reduce(0) { $0 + $1.total }
            let stop = wallClock() + 5
            var entries = followers.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            while followers.reduce(0, { $0 + $1.delays.count + $1.skipped }) < total, wallClock() < stop {
                guard poll(&entries, nfds_t(entries.count), 50) > 0 else { continue }
                for (follower, entry) in zip(followers, entries) where entry.revents != 0 { follower.read(now: wallClock()) }
            }
            outcome.tailDelays = followers.flatMap(\.delays)
            outcome.tailSkipped = followers.reduce(0) { $0 + $1.skipped }
        }
        return outcome
    }

    /// Every connection has its session before the clock starts (the welcome).
    private static func awaitWelcomes(_ devices: [DeviceLoad], scratch: inout [UInt8]) throws {
        var waiting = devices
        let deadline = wallClock() + 30
        while !waiting.isEmpty {
            guard wallClock() < deadline else { throw BenchError("only \(devices.count - waiting.count) of \(devices.count) connections were welcomed") }
            var polled = waiting.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            guard poll(&polled, nfds_t(polled.count), 100) > 0 else { continue }
            var errors: [String] = []
            for (device, entry) in zip(waiting, polled) where entry.revents != 0 {
                device.readReplies(scratch: &scratch, now: 0, errors: &errors)
            }
            if let error = errors.first { throw BenchError("muevald refused the device: \(error)") }
            // Before any event, the only reply a device gets is its welcome.
            waiting = zip(waiting, polled).filter { $0.1.revents == 0 }.map(\.0)
        }
    }
}

/// A live tail on the control socket (what `muevalctl tail --json` reads, without its formatting):
/// for each event line, how long after its `received` stamp it arrived here.
private final class TailReader: ArrivalReader {
    let fd: Int32
    private(set) var delays: [Double] = []
    private(set) var skipped = 0
    private var pending: [UInt8] = []
    private var scratch = [UInt8](repeating: 0, count: 1 << 16)

    init(socket: String, session: Int64) throws {
        let following = try ControlRequest.tails(socket)
        fd = try Sockets.connectUnix(socket)
        try Sockets.writeAll(fd, Array("{\"command\":\"tail\",\"session\":\"\(session)\"}\n".utf8))
        // The request has no reply before the first line: until muevald counts the tail in `status`, events sent
        // would be stored before it follows, and counted as neither received nor skipped.
        try waitUntil(seconds: 10, "muevald to follow session \(session)") { try ControlRequest.tails(socket) > following }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        delays.reserveCapacity(1 << 20)
    }

    func read(now: Double) {
        while true {
            let count = scratch.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            pending += scratch[..<count]
        }
        // Byte scans with memchr: at 50,000 lines/s a generic search here would make the reader the bottleneck.
        let consumed = pending.withUnsafeBytes { buffer -> Int in
            guard let base = buffer.baseAddress else { return 0 }
            var lineStart = 0
            while let found = memchr(base + lineStart, 0x0A, buffer.count - lineStart) {
                let newline = base.distance(to: UnsafeRawPointer(found))
                let line = UnsafeRawBufferPointer(rebasing: buffer[lineStart..<newline])
                lineStart = newline + 1
                if ByteScan.find(Self.eventKind, in: line) != nil, let received = ByteScan.number(after: Self.received, in: line) {
                    delays.append(now - received)
                } else if ByteScan.find(Self.skippedKind, in: line) != nil, let count = ByteScan.number(after: Self.count, in: line) {
                    skipped += Int(count)
                }
            }
            return lineStart
        }
        pending.removeFirst(consumed)
    }

    func close() { Glibc.close(fd) }

    private static let eventKind = Array("\"kind\":\"event\"".utf8)
    private static let skippedKind = Array("\"kind\":\"skipped\"".utf8)
    private static let received = Array("\"received\":".utf8)
    private static let count = Array("\"count\":".utf8)
}
