internal import Foundation
internal import JournalStorage
internal import Logging
internal import NIOCore
internal import WireProtocol

/// One device's TCP connection: decodes its byte stream, routes events to its session's
/// journal, answers with welcome / ack / error, and holds reads while the journal is full, the
/// partial-message budget is exhausted, or a session is being opened for it.
///
/// Everything here runs on the connection's event loop; the decisions are made by
/// `DeviceConnectionStateMachine`, this class carries them out. Events are handed to the journal
/// once per socket read (not per event), with one clock reading per read as their receive time.
final class DeviceConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let registry: SessionRegistry
    private let connections: ConnectionTable
    private let counters: CaptureCounters
    private let configuration: CaptureConfiguration
    private let partialBudget: PartialMessageBudget
    private var logger: Logger

    private var state = DeviceConnectionStateMachine()
    private var decoder: WireDecoder
    private var batch: [JournalRecord] = []
    /// The message that waits for a session being opened; handled first when it is open.
    private var waitingMessage: WireMessage?
    /// The device closed its side while a session was being opened: close once it is handled.
    private var closeWhenHandled = false
    /// Called by the partial-message budget when this connection may read again.
    private var wakeForBudget: @Sendable () -> Void = {}
    /// Replies written during a read are flushed once when the read is done; others at once.
    private var reading = false
    private var repliesUnflushed = false
    /// Events decoded in the current read, added to the shared counter once per read: a per-event
    /// atomic add on a counter every event loop writes costs more than the rest of the bookkeeping.
    private var eventsInRead = 0

    init(registry: SessionRegistry, connections: ConnectionTable, counters: CaptureCounters,
         configuration: CaptureConfiguration, partialBudget: PartialMessageBudget, logger: Logger) {
        self.registry = registry
        self.connections = connections
        self.counters = counters
        self.configuration = configuration
        self.partialBudget = partialBudget
        self.logger = logger
        decoder = WireDecoder(limits: configuration.wireLimits)
    }

    // MARK: Connection lifecycle

    func channelActive(context: ChannelHandlerContext) {
        let address = context.remoteAddress?.ipAddress ?? "unknown"
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
        state.opened(origin: origin, address: address)
        let channel = context.channel
        // Through the event loop, never synchronously inside the budget's caller.
        wakeForBudget = { channel.eventLoop.execute { channel.pipeline.fireUserInboundEventTriggered(ConnectionSignal.partialBudgetAvailable) } }
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
        if let origin = state.origin {
            if !state.isWaitingForSession, let error = decoder.finish() { reject(context, error) }
            appendBatch(context)
            partialBudget.leave(origin, holding: state.partialBytes)
            connections.unregister(origin, address: state.address)
            if let detach = state.closed() {
                registry.detach(detach.session, connection: origin, device: detach.device, cleanly: detach.cleanly,
                                now: Date().timeIntervalSince1970)
            }
            logger.debug("device disconnected")
        }
        context.fireChannelInactive()
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard state.origin != nil else { return }
        let buffer = unwrapInboundIn(data)
        counters.bytesReceived.add(buffer.readableBytes)
        buffer.withUnsafeReadableBytes { decoder.append($0) }
        decodeAvailable(context)
    }

    /// Handles what the decoder holds, until it needs more bytes or a session is being opened.
    private func decodeAvailable(_ context: ChannelHandlerContext) {
        reading = true
        defer {
            reading = false
            counters.eventsReceived.add(eventsInRead)
            eventsInRead = 0
        }
        let now = Date().timeIntervalSince1970
        var completedMessage = false
        while !state.isWaitingForSession, let result = decoder.next() {
            completedMessage = true
            switch result {
            case .success(let message): handle(message, context: context, now: now)
            case .failure(let error): reject(context, error)
            }
            if !context.channel.isActive { return }
        }
        appendBatch(context)
        accountPartialBytes(context, completedMessage: completedMessage)
    }

    private func accountPartialBytes(_ context: ChannelHandlerContext, completedMessage: Bool) {
        guard let origin = state.origin else { return }
        let change = state.partialBytesChanged(to: decoder.bufferedByteCount)
        switch partialBudget.update(origin, from: change.from, to: change.to, completedMessage: completedMessage, wake: wakeForBudget) {
        case .proceed: if state.release(.partialBudget) { context.read() }
        case .pause:
            if !state.holds.contains(.partialBudget) {
                logger.debug("holding \(change.to) bytes of a partial message: waits for the partial-message budget (\(partialBudget.limit) bytes)")
            }
            state.hold(.partialBudget)
        }
    }

    private func handle(_ message: WireMessage, context: ChannelHandlerContext, now: Double) {
        switch message {
        case .event(let event):
            eventsInRead += 1
            receive(.event(event), message: message, context: context, now: now)
        case .media(let media):
            receive(.media(media), message: message, context: context, now: now)
        case .hello(let hello):
            appendBatch(context)
            if let detach = state.helloReceived(hello), let origin = state.origin {
                registry.detach(detach.session, connection: origin, device: detach.device, cleanly: detach.cleanly, now: now)
            }
            logger[metadataKey: "device"] = "\(hello.deviceId)"
            if attach(state.device, context: context, now: now) == nil, !state.isWaitingForSession {
                reply(context, WireEncoder.error(WireReplyError(reason: state.rejectionReason)))
            }
        case .goodbye:
            state.goodbyeReceived()
            appendBatch(context)
        case .welcome, .ack, .error:
            counters.malformedMessages.add(1)
            reply(context, WireEncoder.error(WireReplyError(reason: "devices send hello, event, media and goodbye messages; welcome, ack and error come from the server")))
        }
    }

    /// An event or media chunk: stored in the device's session, which is attached first if need be.
    private func receive(_ content: JournalRecord.Content, message: WireMessage, context: ChannelHandlerContext, now: Double) {
        switch state.eventReceived() {
        case .store(let session):
            store(content, in: session, context: context, now: now)
        case .attach(let device):
            appendBatch(context)
            if let session = attach(device, context: context, now: now) {
                store(content, in: session, context: context, now: now)
            } else if state.isWaitingForSession {
                waitingMessage = message
            } else {
                refuse(content, context: context)
            }
        }
    }

    private func store(_ content: JournalRecord.Content, in session: EvaluationSession, context: ChannelHandlerContext, now: Double) {
        let record = JournalRecord(device: state.deviceID, received: now, content: content, origin: state.origin ?? 0)
        guard session.selects(content) else {
            session.filtered.add(1)
            counters.eventsFiltered.add(1)
            if let seq = state.filtered(seq: record.seq, writable: context.channel.isWritable) { sendAck(context, seq) }
            return
        }
        if case .media(let media) = content, let refusal = session.admitMedia(bytes: media.bytes.count) {
            counters.mediaRefused.add(1)
            reply(context, WireEncoder.error(WireReplyError(reason: refusal, seq: media.seq)))
            // Dealt with like an unselected event: the <error> names it, a later <ack> may cover it.
            if let seq = state.filtered(seq: media.seq, writable: context.channel.isWritable) { sendAck(context, seq) }
            return
        }
        state.appended(seq: record.seq)
        batch.append(record)
    }

    private func refuse(_ content: JournalRecord.Content, context: ChannelHandlerContext) {
        counters.eventsRejectedNoSession.add(1)
        let seq = switch content {
        case .event(let event): event.seq
        case .media(let media): media.seq
        }
        reply(context, WireEncoder.error(WireReplyError(reason: state.rejectionReason, seq: seq)))
    }

    /// Asks the registry for the device's session. Nil when it is refused, or being opened off the
    /// event loop (`state.isWaitingForSession`): then this connection's reads are held and decoding
    /// stops until `ConnectionSignal.sessionOpened` arrives.
    private func attach(_ device: DeviceIdentity, context: ChannelHandlerContext, now: Double) -> EvaluationSession? {
        guard let origin = state.origin else { return nil }
        let channel = context.channel
        let registry = registry
        let outcome = registry.attach(device, connection: origin, deviceToken: configuration.deviceToken,
                                      pairingLimits: configuration.pairing, now: now) { outcome in
            channel.eventLoop.execute {
                if channel.isActive {
                    channel.pipeline.fireUserInboundEventTriggered(ConnectionSignal.sessionOpened(outcome))
                } else if case .attached(let session) = outcome {
                    // The connection was lost meanwhile: the session it would have recorded into learns so.
                    registry.detach(session, connection: origin, device: device.id, cleanly: false, now: Date().timeIntervalSince1970)
                }
            }
        }
        return carryOut(state.attachOutcome(outcome), context: context)
    }

    private func carryOut(_ action: DeviceConnectionStateMachine.AttachAction, context: ChannelHandlerContext) -> EvaluationSession? {
        switch action {
        case .welcome(let session):
            let record = session.snapshot
            reply(context, WireEncoder.welcome(Welcome(sessionId: String(record.id), sensors: record.sensors)))
            return session
        case .rejected(let reason, let log):
            if log { logger.notice("device \(state.deviceID) rejected: \(reason)") }
            return nil
        case .wait:
            return nil
        }
    }

    /// The session being opened for this device is open, or could not be: handle the message that
    /// waited for it, decode on, and read again.
    private func sessionOpened(_ outcome: AttachOutcome, context: ChannelHandlerContext) {
        reading = true
        let session = carryOut(state.sessionOpened(outcome), context: context)
        if session == nil, !batch.isEmpty {
            // Events that were on their way to a stopped session, and have no next one.
            refuse(batch, context: context)
            batch.removeAll(keepingCapacity: true)
        }
        if let message = waitingMessage {
            waitingMessage = nil
            let content: JournalRecord.Content? = switch message {
            case .event(let event): .event(event)
            case .media(let media): .media(media)
            default: nil
            }
            if let content {
                if let session { store(content, in: session, context: context, now: Date().timeIntervalSince1970) } else { refuse(content, context: context) }
            }
        }
        decodeAvailable(context)
        flushReplies(context)
        guard !state.isWaitingForSession else { return }
        if closeWhenHandled {
            finishInput(context)
        } else if state.release(.session) {
            context.read()
        }
    }

    /// The device closed its side: a message it cut off gets its error while the reply can still
    /// reach it, what is batched goes to the journal, and the connection closes.
    private func finishInput(_ context: ChannelHandlerContext) {
        if let error = decoder.finish() { reject(context, error) }
        appendBatch(context)
        flushReplies(context)
        context.close(promise: nil)
    }

    /// Hands the events of this read to the journal; holds reads when the journal is full.
    private func appendBatch(_ context: ChannelHandlerContext) {
        guard !batch.isEmpty, let session = state.session else { return }
        let records = batch
        batch.removeAll(keepingCapacity: true)
        switch session.journal.append(records) {
        case .accepted:
            break
        case .overloaded:
            state.hold(.journal)
            let channel = context.channel
            session.journal.whenDrained { channel.pipeline.fireUserInboundEventTriggered(ConnectionSignal.resumeReading) }
        case .closed:
            // The session was stopped between our check and the append: these events go to the
            // device's next session, or are refused with an error, never dropped silently.
            let now = Date().timeIntervalSince1970
            if attach(state.device, context: context, now: now) != nil {
                batch = records
                appendBatch(context)
            } else if state.isWaitingForSession {
                batch = records
            } else {
                refuse(records, context: context)
            }
        }
    }

    private func refuse(_ records: [JournalRecord], context: ChannelHandlerContext) {
        counters.eventsRejectedNoSession.add(records.count)
        let seq = records.compactMap(\.seq).max()
        reply(context, WireEncoder.error(WireReplyError(
            reason: "\(records.count) events not stored: \(state.rejectionReason)", seq: seq)))
    }

    func read(context: ChannelHandlerContext) {
        if state.readRequested() { context.read() }
    }

    // MARK: Signals and replies

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let signal as ConnectionSignal:
            switch signal {
            case .durable(let seq):
                if let ack = state.durable(seq: seq, writable: context.channel.isWritable) { sendAck(context, ack) }
            case .storageFailed(let reason, let count, let seqs):
                counters.eventsFailedStorage.add(count)
                state.storageFailed(seqs: seqs)
                reply(context, WireEncoder.error(WireReplyError(reason: "\(count) events not stored: \(reason)",
                                                                seq: seqs?.upperBound, fromSeq: seqs.map { $0.lowerBound })))
            case .resumeReading:
                if state.release(.journal) { context.read() }
            case .partialBudgetAvailable:
                if state.release(.partialBudget) { context.read() }
            case .sessionOpened(let outcome):
                sessionOpened(outcome, context: context)
            }
        case ChannelEvent.inputClosed:
            // The device closed its side (`nc -N`): what it sent is handled first, even when a
            // session is still being opened for it; then the connection closes.
            if state.isWaitingForSession { closeWhenHandled = true } else { finishInput(context) }
        case let idle as IdleStateHandler.IdleStateEvent where idle == .read:
            logger.info("closing idle connection")
            reply(context, WireEncoder.error(WireReplyError(reason: "idle for \(Int(configuration.idleTimeout)) s: closing")))
            context.close(promise: nil)
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    private func sendAck(_ context: ChannelHandlerContext, _ seq: Int64) {
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: WireEncoder.ack(seq: seq))), promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let seq = state.becameWritable() { sendAck(context, seq) }
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
        let (report, close) = state.malformed(fatal: error.isFatal)
        switch report {
        case .full: logger.warning("rejected message: \(error.message)", metadata: error.seq.map { ["seq": "\($0)"] })
        case .tally(let count): logger.warning("rejected \(count) malformed messages from this connection so far; the latest: \(error.message)")
        case .none: break
        }
        reply(context, WireEncoder.error(WireReplyError(reason: error.message, seq: error.seq)))
        if close {
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
