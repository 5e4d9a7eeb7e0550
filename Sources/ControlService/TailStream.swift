internal import ControlProtocol
internal import SessionCore
internal import SessionModel

/// `tail`: tail lines until the client hangs up, the followed session stops or the daemon stops.
struct TailStream: Sendable {
    let registry: SessionRegistry
    let liveTail: LiveTail
    /// Lines a tail holds for a slow reader (`limits.tail_buffer`).
    let buffer: @Sendable () -> Int
    /// Where a tail's history (`since`) is read.
    let pages: EventPages

    /// The daemon stops: live tails say so and end.
    func closeAll(now: Double) {
        liveTail.closeAll(now: now)
    }

    /// The subscription starts before the history is read, so no event falls between the two;
    /// live events already shown as history are left out by id.
    func follow(_ request: ControlRequest.Tail, writer: ControlReplyWriter) async throws -> ControlCommands.Continuation {
        let followed: SessionRecord? = switch request.sessions {
        case .all: nil
        case .session(let key): try registry.find(key)
        }
        let filter = TailFilter(sessions: followed.map { [$0.id] }, classes: Set(request.classes),
                                device: request.device, grep: request.grep)
        let subscription = liveTail.subscribe(filter, capacity: buffer())
        defer { subscription.cancel() }
        writer.closeFuture.whenComplete { _ in subscription.cancel() }

        var shownUpTo: [Int64: Int64] = [:]
        if let since = request.since, since > 0 {
            for record in followed.map({ [$0] }) ?? registry.openSessions().map(\.snapshot) {
                try await pages.forEachPage(of: record, classes: request.classes, last: since) { history in
                    shownUpTo[record.id] = history.last?.id
                    try await writer.tail(history.map { TailLine.event($0, session: record.id) }.filter(filter.admits))
                }
            }
        }
        if let followed, followed.state == .stopped {
            try await writer.succeed(request, with: Empty())
            return .readNextRequest
        }
        while let lines = await subscription.next() {
            let fresh = lines.filter { line in
                guard let session = line.session, let id = line.event?.id, let shown = shownUpTo[session] else { return true }
                return id > shown
            }
            try await writer.tail(fresh)
            // No final line: the client learns from the closed connection that the daemon is gone.
            if lines.contains(where: { $0.kind == .daemonStopping }) { return .close }
            if followed != nil, lines.contains(where: { $0.kind == .sessionStopped }) { break }
        }
        try await writer.succeed(request, with: Empty())
        return .readNextRequest
    }
}
