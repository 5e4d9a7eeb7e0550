internal import DequeModule
internal import WireProtocol

/// The events a device has generated and the server has not yet acknowledged, in seq order: the bounded
/// buffer of a capture library that must lose nothing across dropped connections.
///
/// Events are written in order; after a reconnect everything unacknowledged is written again, from the
/// oldest, because the new connection's server may never have stored it (the server drops duplicates).
struct Outbox {
    let capacity: Int
    private var events: Deque<OutgoingEvent> = []
    /// How many of `events`, from the front, were written on the current connection.
    private var written = 0
    /// The highest seq ever written, to tell a resend from a first send.
    private var highestWritten: Int64 = 0

    init(capacity: Int) {
        self.capacity = capacity
    }

    var count: Int { events.count }
    var hasRoom: Bool { events.count < capacity }

    mutating func append(_ event: OutgoingEvent) {
        events.append(event)
    }

    /// Events to write now, and how many of them go out a second (or later) time.
    mutating func takeUnwritten() -> (events: [OutgoingEvent], resent: Int) {
        let batch = Array(events[written...])
        written = events.count
        let resent = batch.prefix { $0.seq <= highestWritten }.count
        if let last = batch.last { highestWritten = max(highestWritten, last.seq) }
        return (batch, resent)
    }

    /// The connection is gone: nothing is known to be written any more.
    mutating func connectionLost() {
        written = 0
    }

    /// `<ack seq=S>`: every event up to S is durable. Returns how many events that settled.
    mutating func acknowledge(through seq: Int64) -> Int {
        var settled = 0
        while let first = events.first, first.seq <= seq, written > 0 {
            events.removeFirst()
            written -= 1
            settled += 1
        }
        return settled
    }

    /// `<error seq=S>`: the server refused the event; sending it again would not change that.
    mutating func reject(_ seq: Int64) -> Bool {
        guard let index = events.firstIndex(where: { $0.seq == seq }) else { return false }
        events.remove(at: index)
        if index < written { written -= 1 }
        return true
    }

    /// Events written but still waiting for an ack, split by whether the session records them (its
    /// sensors, from `<welcome>`): those it does not record are not waited for at the end of a run.
    func unsettled(selectedBy welcome: Welcome?) -> (awaited: Int, notSelected: Int) {
        let selection = SensorSelection(welcome?.sensors ?? [])
        let notSelected = events.reduce(0) { count, event in
            let selected = event.media.map(selection.selects) ?? selection.selects(eventClass: event.eventClass.rawValue, sensor: event.sensor)
            return selected ? count : count + 1
        }
        return (events.count - notSelected, notSelected)
    }
}
