internal import Foundation
internal import HummingbirdWebSocket
internal import JournalStorage
internal import MuEvalAsync
internal import MuEvalWire
internal import NIOConcurrencyHelpers
internal import NIOCore
internal import NIOWebSocket
internal import ReplayIndex
internal import ReportCritique
internal import SessionCore
internal import SessionModel
internal import WireProtocol

/// Events per second of each open session, sampled once a second from the sessions' own counts.
final class SessionRates: Sendable {
    private struct Sample {
        var time: Double
        var events: [Int64: Int64]
    }
    private let state = NIOLockedValueBox<(previous: Sample?, rates: [Int64: Double])>((nil, [:]))

    var current: [Int64: Double] { state.withLockedValue { $0.rates } }

    /// Takes a sample; returns the rates since the previous one.
    @discardableResult
    func sample(_ sessions: [SessionRecord], now: Double) -> [Int64: Double] {
        let sample = Sample(time: now, events: Dictionary(sessions.map { ($0.id, $0.events) }, uniquingKeysWith: { a, _ in a }))
        return state.withLockedValue { state in
            var rates: [Int64: Double] = [:]
            if let previous = state.previous, now > previous.time {
                for (id, events) in sample.events {
                    rates[id] = Double(max(0, events - (previous.events[id] ?? events))) / (now - previous.time)
                }
            }
            state = (sample, rates)
            return rates
        }
    }
}

/// The Sessions and Server pages' push channel: "sessions changed" and the rates once a second.
///
/// Every subscriber has a small buffer that keeps the newest messages: a page that stalls misses
/// older updates, which the next "sessions" message makes good, and never holds up the others.
final class ConsoleUpdates: Sendable {
    private let subscribers = NIOLockedValueBox<[UInt64: AsyncStream<ByteBuffer>.Continuation]>([:])
    private let nextID = NIOLockedValueBox<UInt64>(0)

    static let sessionsChanged = ByteBuffer(string: #"{"type":"sessions"}"#)

    /// A recruited study met its target or passed its deadline: every page shows a notice with its report (the
    /// study's report of every iteration, which the completion wrote).
    static func studyCompleted(_ study: String, reason: String) -> ByteBuffer {
        var json: [UInt8] = Array(#"{"type":"studyCompleted","study":"#.utf8)
        JSONString.append(study, to: &json)
        json.append(contentsOf: #","reason":"#.utf8)
        JSONString.append(reason, to: &json)
        json.append(contentsOf: #","url":"#.utf8)
        JSONString.append(ReportLocations.url(study: study), to: &json)
        json.append(UInt8(ascii: "}"))
        return ByteBuffer(bytes: json)
    }

    /// A study's recruitment or its invitations changed: its page reloads them.
    static func recruitmentChanged(_ study: String) -> ByteBuffer {
        var json: [UInt8] = Array(#"{"type":"recruitment","study":"#.utf8)
        JSONString.append(study, to: &json)
        json.append(UInt8(ascii: "}"))
        return ByteBuffer(bytes: json)
    }
    func subscribe() -> (id: UInt64, messages: AsyncStream<ByteBuffer>) {
        let id = nextID.withLockedValue { $0 += 1; return $0 }
        let (stream, continuation) = AsyncStream<ByteBuffer>.makeStream(bufferingPolicy: .bufferingNewest(8))
        subscribers.withLockedValue { $0[id] = continuation }
        return (id, stream)
    }

    func unsubscribe(_ id: UInt64) {
        subscribers.withLockedValue { $0.removeValue(forKey: id) }?.finish()
    }

    var isFollowed: Bool { subscribers.withLockedValue { !$0.isEmpty } }

    func send(_ message: ByteBuffer) {
        for continuation in subscribers.withLockedValue({ Array($0.values) }) { continuation.yield(message) }
    }

    func finishAll() {
        for continuation in subscribers.withLockedValue({ subscribers in
            defer { subscribers.removeAll() }
            return Array(subscribers.values)
        }) { continuation.finish() }
    }

    /// `{"type":"rates","sessions":{"7":12.5},"events":{"7":1234},"counters":{…}}`: events per second
    /// and events stored of each open session, and the daemon's counters.
    static func rates(_ rates: [Int64: Double], events sessions: [SessionRecord], counters: CounterSnapshot) throws -> ByteBuffer {
        var json: [UInt8] = Array(#"{"type":"rates","sessions":{"#.utf8)
        for (index, (id, rate)) in rates.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            JSONString.append(String(id), to: &json)
            json.append(UInt8(ascii: ":"))
            JSONObject.number(rate, to: &json)
        }
        json.append(contentsOf: #"},"events":{"#.utf8)
        for (index, session) in sessions.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            JSONString.append(String(session.id), to: &json)
            json.append(UInt8(ascii: ":"))
            JSONObject.integer(session.events, to: &json)
        }
        json.append(contentsOf: #"},"counters":"#.utf8)
        json.append(contentsOf: try JSONEncoder().encode(counters))
        json.append(UInt8(ascii: "}"))
        return ByteBuffer(bytes: json)
    }

    /// `{"type":"report","session":7,"name":"default","report":{…}}`: a report was written or failed.
    static func report(session: Int64, name: String, state: ReportState) throws -> ByteBuffer {
        var json: [UInt8] = Array(#"{"type":"report","session":"#.utf8)
        JSONObject.integer(session, to: &json)
        json.append(contentsOf: #","name":"#.utf8)
        JSONString.append(name, to: &json)
        json.append(contentsOf: #","report":"#.utf8)
        json.append(contentsOf: try JSONEncoder().encode(state))
        json.append(UInt8(ascii: "}"))
        return ByteBuffer(bytes: json)
    }
}

/// Fires once, when muevald shuts down; WebSocket handlers wait on it.
final class ConsoleShutdown: Sendable {
    private let fired = AsyncCondition(false)

    func fire() {
        fired.withState { $0 = true }
    }

    /// Returns once fired, or when the waiting task is cancelled.
    func wait() async {
        _ = await fired.wait { $0 }
    }
}

/// The Live page's stream: what the session looks like now, then every commit's events as they are stored.
enum LiveStream {
    /// Events the first message carries.
    static let recentEvents = 200

    /// `{"type":"hello",…}`: the session, its device, its last events, screenshot and view.
    static func hello(_ record: SessionRecord) throws -> (message: ByteBuffer, lastEventID: Int64) {
        let reader = try SessionReader(path: record.path)
        let recent = try reader.events(last: recentEvents)
        let screen = try reader.lastEvent(of: EventClass.userInterface.rawValue, havingAnyOf: PlistValue.screenshotKeys)
        let device = try reader.device(of: record)

        var json: [UInt8] = Array(#"{"type":"hello","session":"#.utf8)
        let encoder = JSONEncoder()
        json.append(contentsOf: try encoder.encode(record))
        json.append(contentsOf: #","device":"#.utf8)
        json.append(contentsOf: try device.map { Array(try encoder.encode($0)) } ?? Array("null".utf8))
        json.append(contentsOf: #","recent":["#.utf8)
        for (index, event) in recent.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            json.append(contentsOf: ConsoleEvent.json(event))
        }
        json.append(contentsOf: #"],"screenshot":"#.utf8)
        let payload = try screen.map { try TypedJSON.decodeLeavingBlobs(Array($0.payload.utf8)) }
        if let screen, let blob = payload?.screenshot {
            json.append(contentsOf: #"{"sha":"#.utf8)
            JSONString.append(blob.sha256, to: &json)
            json.append(contentsOf: #","t":"#.utf8)
            JSONObject.number(screen.timestamp, to: &json)
            json.append(UInt8(ascii: "}"))
        } else {
            json.append(contentsOf: "null".utf8)
        }
        json.append(contentsOf: #","view":"#.utf8)
        if let view = payload?["view"]?.string { JSONString.append(view, to: &json) } else { json.append(contentsOf: "null".utf8) }
        json.append(contentsOf: #","viewStack":["#.utf8)
        for (index, name) in (payload?["viewStack"]?.array ?? []).compactMap(\.string).enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            JSONString.append(name, to: &json)
        }
        json.append(contentsOf: "]}".utf8)
        return (ByteBuffer(bytes: json), recent.last?.id ?? 0)
    }

    /// The tail's lines as the page's messages: consecutive events in one `events` message (one per batch,
    /// `forward`), markers and skips in their own. Events the hello already carried are left out.
    static func messages(_ lines: [TailLine], after lastEventID: inout Int64) -> [ByteBuffer] {
        var messages: [ByteBuffer] = []
        var events: [UInt8] = []
        func flushEvents() {
            guard !events.isEmpty else { return }
            messages.append(ByteBuffer(bytes: Array(#"{"type":"events","events":["#.utf8) + events + Array("]}".utf8)))
            events.removeAll(keepingCapacity: true)
        }
        for line in lines {
            switch line.kind {
            case .event:
                guard let event = line.event, event.id > lastEventID else { continue }
                lastEventID = event.id
                if !events.isEmpty { events.append(UInt8(ascii: ",")) }
                events.append(contentsOf: ConsoleEvent.json(event))
            case .skipped:
                flushEvents()
                var json: [UInt8] = Array(#"{"type":"skipped","count":"#.utf8)
                JSONObject.integer(Int64(line.count ?? 0), to: &json)
                json.append(UInt8(ascii: "}"))
                messages.append(ByteBuffer(bytes: json))
            case .speech:
                // Transcripts come after the session stopped: the replay shows them, not the live page.
                continue
            case .sessionStarted, .sessionStopped, .deviceConnected, .deviceDisconnected, .daemonStopping:
                flushEvents()
                var json: [UInt8] = Array(#"{"type":"marker","kind":"#.utf8)
                JSONString.append(line.kind.rawValue, to: &json)
                json.append(contentsOf: #","time":"#.utf8)
                JSONObject.number(line.time, to: &json)
                if let device = line.device { json.append(contentsOf: #","device":"#.utf8); JSONString.append(device, to: &json) }
                if let detail = line.detail { json.append(contentsOf: #","detail":"#.utf8); JSONString.append(detail, to: &json) }
                json.append(UInt8(ascii: "}"))
                messages.append(ByteBuffer(bytes: json))
            }
        }
        flushEvents()
        return messages
    }

    /// Sends the subscription's lines as the page's messages until it ends. After a message, what arrives
    /// within `batch` is gathered and goes out as the next one (the subscription's buffer holds it, bounded
    /// by `console.live_buffer`; what does not fit is a skip): a message per frame, not per commit. The
    /// first lines after a quiet spell go out at once.
    static func forward(_ subscription: TailSubscription, after helloLastEventID: Int64, batch: Duration,
                        send: ([ByteBuffer]) async throws -> Void) async throws {
        let clock = ContinuousClock()
        var lastEventID = helloLastEventID
        while let lines = await subscription.next() {
            let started = clock.now
            try await send(messages(lines, after: &lastEventID))
            if batch > .zero { try await Task.sleep(until: started.advanced(by: batch), clock: clock) }
        }
    }

    /// Runs `sending` until it ends, the page closes the socket, or muevald shuts down. The pages send
    /// nothing, but reading is what answers their close frame at once and ends the sending with it.
    /// At shutdown the connection is closed outright: a write to a browser that stopped reading waits
    /// for it, and so would the close frame, holding the daemon's exit as long as the browser stalls.
    /// `onMessage`: what a message the peer should not send does (the pages' are ignored).
    static func untilClosed(_ inbound: WebSocketInboundStream, channel: any Channel, or shutdown: ConsoleShutdown,
                            onMessage: @escaping @Sendable () -> Void = {},
                            _ sending: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { for try await _ in inbound { onMessage() } }
            tasks.addTask { try await sending() }
            tasks.addTask {
                await shutdown.wait()
                if !Task.isCancelled { channel.close(promise: nil) }
            }
            try await tasks.next()
            tasks.cancelAll()
        }
    }

    /// Sends `messages` as text frames: WebSocket writes wait while the socket is full, so a stalled
    /// browser holds up only its own sender, and the tail subscription's bounded buffer counts what it misses.
    static func send(_ messages: [ByteBuffer], to outbound: WebSocketOutboundWriter) async throws {
        for message in messages {
            try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .text, data: message)))
        }
    }
}
