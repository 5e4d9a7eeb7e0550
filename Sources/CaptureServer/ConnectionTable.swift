internal import SessionCore
internal import NIOConcurrencyHelpers
internal import NIOCore

/// Signals delivered to a device connection from outside its event loop, through its pipeline.
enum ConnectionSignal: Sendable {
    /// Events up to this `seq` are committed: acknowledge.
    case durable(seq: Int64)
    /// Events of this connection could not be stored.
    case storageFailed(reason: String, count: Int, seqs: ClosedRange<Int64>?)
    /// The journal drained below its limit: read the socket again.
    case resumeReading
    /// The partial-message budget lets this connection read again.
    case partialBudgetAvailable
    /// The session being opened for this connection (policy `auto`) is open, or could not be.
    case sessionOpened(AttachOutcome)
    /// `server.hello_timeout` passed since the connection opened.
    case helloTimeout
    /// The descriptor budget is nearly spent and this connection has said nothing for longest.
    case evicted
}

/// The open device connections, by origin id, so that commits can reach the connection that sent
/// the events; and the per-address counts that enforce `maxConnectionsPerAddress`.
public final class ConnectionTable: Sendable {
    private struct State {
        var channels: [UInt64: Channel] = [:]
        var perAddress: [String: Int] = [:]
        var nextOrigin: UInt64 = 1
    }
    private let state = NIOLockedValueBox(State())

    public init() {}

    /// Registers a connection; nil when its address already has `limit` connections open. Without a limit
    /// (a web device, counted at its upgrade) it is not counted against its address either.
    func register(_ channel: Channel, address: String, limit: Int?) -> UInt64? {
        state.withLockedValue { state in
            if let limit {
                guard state.perAddress[address, default: 0] < limit else { return nil }
                state.perAddress[address, default: 0] += 1
            }
            let origin = state.nextOrigin
            state.nextOrigin += 1
            state.channels[origin] = channel
            return origin
        }
    }

    /// `counted`: it was registered with a limit.
    func unregister(_ origin: UInt64, address: String, counted: Bool) {
        state.withLockedValue { state in
            state.channels[origin] = nil
            guard counted else { return }
            state.perAddress[address, default: 1] -= 1
            if state.perAddress[address] == 0 { state.perAddress[address] = nil }
        }
    }

    func signal(_ origin: UInt64, _ signal: ConnectionSignal) {
        state.withLockedValue { $0.channels[origin] }?.pipeline.fireUserInboundEventTriggered(signal)
    }

    /// Closes every device connection (shutdown).
    func closeAll() async {
        let channels = state.withLockedValue { Array($0.channels.values) }
        for channel in channels { try? await channel.close() }
    }

    public var count: Int { state.withLockedValue { $0.channels.count } }
}
