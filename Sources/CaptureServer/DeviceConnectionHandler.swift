internal import Foundation
internal import JournalStorage
internal import Logging
internal import NIOCore
internal import WireProtocol

/// One device's TCP connection: decodes its byte stream, routes events to its session's
/// journal, answers with welcome / ack / error, and stops reading while the journal is full.
///
/// Everything here runs on the connection's event loop. Events are handed to the journal once
/// per socket read (not per event), with one clock reading per read as their receive time.
final class DeviceConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let registry: SessionRegistry
    private let connections: ConnectionTable
    private let counters: CaptureCounters
    private let configuration: CaptureConfiguration
    private var logger: Logger

    private var decoder: WireDecoder
    private var origin: UInt64?
    private var address = "unknown"
    private var identity: DeviceIdentity?
    private var session: EvaluationSession?
    private var batch: [JournalRecord] = []
    private var saidGoodbye = false
    /// Malformed messages from this connection so far; the log shows the first few and then a tally,
    /// so that a flood of junk cannot flood the journal too (the counter in `status` has them all).
    private var malformedCount = 0
    private static let malformedLoggedInFull = 100
    private static let malformedTallyInterval = 1000
    /// Replies written during a read are flushed once when the read is done; others at once.
    private var reading = false
    /// Events decoded in the current read, added to the shared counter once per read: a per-event
    /// atomic add on a counter every event loop writes costs more than the rest of the bookkeeping.
    private var eventsInRead = 0
    private var repliesUnflushed = false

    // Backpressure: while the journal is over its limit, reads are held back.
    private var readingPaused = false
    private var readHeldBack = false

    // Acknowledgements are coalesced: only the highest durable seq matters.
    private var lastAcknowledged: Int64 = .min
    private var ackWaitingForWritability: Int64?
    /// The highest seq handed to the journal, and the highest it reported durable.
    private var lastAppendedSeq: Int64 = .min
    private var lastDurableSeq: Int64 = .min
    /// The highest seq of an event the session did not select: dealt with on arrival, acknowledged
    /// as soon as every stored event before it is durable (else a stream ending with such events
    /// would never be acknowledged).
    private var lastFilteredSeq: Int64 = .min

    init(registry: SessionRegistry, connections: ConnectionTable, counters: CaptureCounters,
         configuration: CaptureConfiguration, logger: Logger) {
        self.registry = registry
        self.connections = connections
        self.counters = counters
        self.configuration = configuration
        self.logger = logger
        decoder = WireDecoder(limits: configuration.wireLimits)
    }

    // MARK: Connection lifecycle

    func channelActive(context: ChannelHandlerContext) {
        address = context.remoteAddress?.ipAddress ?? "unknown"
        logger[metadataKey: "peer"] = "\(context.remoteAddress.map { "\($0)" } ?? "unknown")"
        let open = counters.connectionsOpen.wrappingAdd(1, ordering: .relaxed).newValue
        guard open <= configuration.maxConnections else {
            refuse(context, "the server has reached its limit of \(configuration.maxConnections) device connections")
            return
        }
        guard let origin = connections.register(context.channel, address: address,
                                                limit: configuration.maxConnectionsPerAddress) else {
            refuse(context, "too many connections from \(address) (limit \(configuration.maxConnectionsPerAddress))")
            return
        }
        self.origin = origin
        counters.connectionsAccepted.add(1)
        logger.debug("device connected")
        context.fireChannelActive()
    }

    private func refuse(_ context: ChannelHandlerContext, _ reason: String) {
        counters.connectionsRefused.add(1)
        logger.warning("connection refused: \(reason)")
        reply(context, WireEncoder.error(WireReplyError(reason: reason)))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        counters.connectionsOpen.add(-1)
        if let origin {
            if let error = decoder.finish() { reject(context, error) }
            appendBatch(context)
            connections.unregister(origin, address: address)
            if let session, let identity {
                registry.detach(session, device: identity.id, cleanly: saidGoodbye, now: Date().timeIntervalSince1970)
            }
            logger.debug("device disconnected", metadata: ["goodbye": "\(saidGoodbye)"])
        }
        context.fireChannelInactive()
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard origin != nil else { return }
        reading = true
        defer {
            reading = false
            counters.eventsReceived.add(eventsInRead)
            eventsInRead = 0
        }
        let buffer = unwrapInboundIn(data)
        counters.bytesReceived.add(buffer.readableBytes)
        buffer.withUnsafeReadableBytes { decoder.append($0) }
        let now = Date().timeIntervalSince1970
        while let result = decoder.next() {
            switch result {
            case .success(let message): handle(message, context: context, now: now)
            case .failure(let error): reject(context, error)
            }
            if !context.channel.isActive { return }
        }
        appendBatch(context)
    }

    private func handle(_ message: WireMessage, context: ChannelHandlerContext, now: Double) {
        switch message {
        case .event(let event):
            eventsInRead += 1
            guard let session = currentSession(context, now: now) else {
                counters.eventsRejectedNoSession.add(1)
                reply(context, WireEncoder.error(WireReplyError(reason: rejectionReason(), seq: event.seq)))
                return
            }
            guard session.selects(event) else {
                session.filtered.add(1)
                counters.eventsFiltered.add(1)
                if let seq = event.seq {
                    lastFilteredSeq = max(lastFilteredSeq, seq)
                    if lastAppendedSeq <= lastDurableSeq { acknowledge(context, seq) }
                }
                return
            }
            if let seq = event.seq { lastAppendedSeq = max(lastAppendedSeq, seq) }
            batch.append(JournalRecord(device: deviceID, received: now, event: event, origin: origin ?? 0))
        case .hello(let hello):
            appendBatch(context)
            identity = DeviceIdentity(id: hello.deviceId, hello: hello, address: address)
            logger[metadataKey: "device"] = "\(hello.deviceId)"
            session = nil
            if currentSession(context, now: now) == nil {
                reply(context, WireEncoder.error(WireReplyError(reason: rejectionReason())))
            }
        case .goodbye:
            saidGoodbye = true
            appendBatch(context)
        case .welcome, .ack, .error:
            counters.malformedMessages.add(1)
            reply(context, WireEncoder.error(WireReplyError(reason: "devices send hello, event and goodbye messages; welcome, ack and error come from the server")))
        }
    }

    private var deviceID: String { identity?.id ?? "address:\(address)" }

    private var lastRejection: String?

    private func rejectionReason() -> String {
        lastRejection ?? "no session for this device"
    }

    /// The open session of this device, attaching (and welcoming) when there is none yet or the
    /// previous one was stopped: a stopped session hands the device on to the next one.
    private func currentSession(_ context: ChannelHandlerContext, now: Double) -> EvaluationSession? {
        if let session, session.isOpen { return session }
        appendBatch(context)
        let device = identity ?? DeviceIdentity(id: deviceID, hello: nil, address: address)
        switch registry.attach(device, deviceToken: configuration.deviceToken, now: now) {
        case .attached(let attached):
            session = attached
            lastRejection = nil
            let record = attached.snapshot
            reply(context, WireEncoder.welcome(Welcome(sessionId: String(record.id), sensors: record.sensors)))
            return attached
        case .rejected(let reason):
            if session != nil || lastRejection == nil { logger.notice("device \(device.id) rejected: \(reason)") }
            session = nil
            lastRejection = reason
            return nil
        }
    }

    /// Hands the events of this read to the journal; pauses reading when the journal is full.
    private func appendBatch(_ context: ChannelHandlerContext) {
        guard !batch.isEmpty, let session else { return }
        let records = batch
        batch.removeAll(keepingCapacity: true)
        switch session.journal.append(records) {
        case .accepted:
            break
        case .overloaded:
            readingPaused = true
            let channel = context.channel
            session.journal.whenDrained { channel.pipeline.fireUserInboundEventTriggered(ConnectionSignal.resumeReading) }
        case .closed:
            // The session was stopped between our check and the append: these events go to the
            // device's next session, or are refused with an error, never dropped silently.
            self.session = nil
            let now = Date().timeIntervalSince1970
            if currentSession(context, now: now) != nil {
                batch = records
                appendBatch(context)
            } else {
                counters.eventsRejectedNoSession.add(records.count)
                let seq = records.compactMap(\.event.seq).max()
                reply(context, WireEncoder.error(WireReplyError(
                    reason: "\(records.count) events not stored: \(rejectionReason())", seq: seq)))
            }
        }
    }

    func read(context: ChannelHandlerContext) {
        if readingPaused {
            readHeldBack = true
        } else {
            context.read()
        }
    }

    // MARK: Signals and replies

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let signal as ConnectionSignal:
            switch signal {
            case .durable(let seq):
                lastDurableSeq = max(lastDurableSeq, seq)
                let filteredSince = lastAppendedSeq <= lastDurableSeq && lastFilteredSeq > seq
                acknowledge(context, filteredSince ? lastFilteredSeq : seq)
            case .storageFailed(let reason, let count, let seqs):
                counters.eventsFailedStorage.add(count)
                // The failed events count as dealt with for acknowledgement: the error names them.
                if let seqs { lastDurableSeq = max(lastDurableSeq, seqs.upperBound) }
                reply(context, WireEncoder.error(WireReplyError(reason: "\(count) events not stored: \(reason)",
                                                                seq: seqs?.upperBound, fromSeq: seqs.map { $0.lowerBound })))
            case .resumeReading:
                readingPaused = false
                if readHeldBack {
                    readHeldBack = false
                    context.read()
                }
            }
        case let idle as IdleStateHandler.IdleStateEvent where idle == .read:
            logger.info("closing idle connection")
            reply(context, WireEncoder.error(WireReplyError(reason: "idle for \(Int(configuration.idleTimeout)) s: closing")))
            context.close(promise: nil)
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    private func acknowledge(_ context: ChannelHandlerContext, _ seq: Int64) {
        guard seq > lastAcknowledged else { return }
        guard context.channel.isWritable else {
            ackWaitingForWritability = seq
            return
        }
        lastAcknowledged = seq
        ackWaitingForWritability = nil
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: WireEncoder.ack(seq: seq))), promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let seq = ackWaitingForWritability { acknowledge(context, seq) }
        context.fireChannelWritabilityChanged()
    }

    /// Sends a reply unless the device is not reading its replies: then it is counted and dropped,
    /// so that a device that never reads can never make the server buffer without bound.
    private func reply(_ context: ChannelHandlerContext, _ bytes: [UInt8]) {
        // Replies gathered in this read may fill the write buffer by themselves: hand them to the socket first.
        if !context.channel.isWritable { flushReplies(context) }
        guard context.channel.isWritable else {
            counters.repliesDropped.add(1)
            return
        }
        let buffer = wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes))
        guard reading else { return context.writeAndFlush(buffer, promise: nil) }
        context.write(buffer, promise: nil)
        repliesUnflushed = true
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushReplies(context)
        context.fireChannelReadComplete()
    }

    private func flushReplies(_ context: ChannelHandlerContext) {
        guard repliesUnflushed else { return }
        repliesUnflushed = false
        context.flush()
    }

    private func reject(_ context: ChannelHandlerContext, _ error: WireError) {
        counters.malformedMessages.add(1)
        malformedCount += 1
        if malformedCount <= Self.malformedLoggedInFull {
            logger.warning("rejected message: \(error.message)", metadata: error.seq.map { ["seq": "\($0)"] })
        } else if malformedCount % Self.malformedTallyInterval == 0 {
            logger.warning("rejected \(malformedCount) malformed messages from this connection so far; the latest: \(error.message)")
        }
        reply(context, WireEncoder.error(WireReplyError(reason: error.message, seq: error.seq)))
        if error.isFatal {
            appendBatch(context)
            flushReplies(context)
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        logger.info("connection error: \(error)")
        context.close(promise: nil)
    }
}
