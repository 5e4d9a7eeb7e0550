internal import MuEvalWire
internal import SessionCore
internal import Foundation
internal import JournalStorage
internal import Logging
internal import NIOCore
internal import SessionModel
internal import WireProtocol

/// One device's TCP connection: decodes its byte stream, routes events to its session's
/// journal, answers with welcome / ack / error, and holds reads while the journal is full, the
/// partial-message budget is exhausted, or a session is being opened for it.
///
/// Everything here runs on the connection's event loop; the decisions are made by
/// `DeviceConnectionStateMachine`, this class carries them out: reading and routing here, the
/// session's part in `+Session`, replies and acknowledgements in `+Replies`. Events are handed to the journal
/// once per socket read (not per event), with one clock reading per read as their receive time.
final class DeviceConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let registry: SessionRegistry
    let connections: ConnectionTable
    let ledger: ConnectionLedger
    let counters: CaptureCounters
    let configuration: CaptureConfiguration
    let partialBudget: PartialMessageBudget
    let transport: DeviceTransport
    var logger: Logger

    var state = DeviceConnectionStateMachine()
    var decoder: WireDecoder
    var batch: [JournalRecord] = []
    /// The message that waits for a session being opened; handled first when it is open.
    var waitingMessage: WireMessage?
    /// The device closed its side while a session was being opened: close once it is handled.
    var closeWhenHandled = false
    /// Called by the partial-message budget when this connection may read again.
    var wakeForBudget: @Sendable () -> Void = {}
    /// Replies written during a read are flushed once when the read is done; others at once.
    var reading = false
    var repliesUnflushed = false
    /// Events decoded in the current read, added to the shared counter once per read: a per-event
    /// atomic add on a counter every event loop writes costs more than the rest of the bookkeeping.
    var eventsInRead = 0
    /// This connection in the descriptor budget, once admitted.
    var admission: ConnectionAdmission.ID?
    var helloTimer: Scheduled<Void>?

    init(registry: SessionRegistry, connections: ConnectionTable, ledger: ConnectionLedger, counters: CaptureCounters,
         configuration: CaptureConfiguration, partialBudget: PartialMessageBudget, transport: DeviceTransport = .tcp, logger: Logger) {
        self.transport = transport
        self.registry = registry
        self.connections = connections
        self.ledger = ledger
        self.counters = counters
        self.configuration = configuration
        self.partialBudget = partialBudget
        self.logger = logger
        decoder = WireDecoder(limits: configuration.wireLimits)
    }

    // MARK: Connection lifecycle

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    /// Added to a connection that is already open (a WebSocket, after its upgrade): it starts now.
    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    private func start(_ context: ChannelHandlerContext) {
        let address = transport.address ?? context.remoteAddress?.ipAddress ?? "unknown"
        logger[metadataKey: "peer"] = "\(transport.address ?? context.remoteAddress.map { "\($0)" } ?? "unknown")"
        counters.connectionsOpen.add(1)
        let channel = context.channel
        if !transport.admitted {
            // Chosen to make room: told why on its own event loop, then closed.
            switch ledger.admit(.capture, close: { channel.pipeline.fireUserInboundEventTriggered(ConnectionSignal.evicted) }) {
            case .refused(let refusal):
                refuse(context, refusal, address: address)
                return
            case .admitted(let id):
                admission = id
            }
        }
        guard let origin = connections.register(context.channel, address: address,
                                                limit: transport.web ? nil : configuration.maxConnectionsPerAddress) else {
            refuse(context, Refusal(.devicePerAddress, "too many connections from \(address) (limit \(configuration.maxConnectionsPerAddress), server.max_connections_per_address)"),
                   address: address)
            return
        }
        state.opened(origin: origin, address: address, mustPresentCode: transport.mustPresentCode)
        if configuration.helloTimeout > 0 {
            helloTimer = channel.eventLoop.scheduleTask(in: .nanoseconds(Int64(configuration.helloTimeout * 1e9))) {
                channel.pipeline.fireUserInboundEventTriggered(ConnectionSignal.helloTimeout)
            }
        }
        // Through the event loop, never synchronously inside the budget's caller.
        wakeForBudget = { channel.eventLoop.execute { channel.pipeline.fireUserInboundEventTriggered(ConnectionSignal.partialBudgetAvailable) } }
        counters.connectionsAccepted.add(1)
        logger.debug("device connected")
    }

    /// Turned away before it was served: told why in an `<error>`, counted, logged once a minute per address and reason.
    func refuse(_ context: ChannelHandlerContext, _ refusal: Refusal, address: String) {
        counters.connectionsRefused.add(1)
        counters.refusals.record(refusal, of: transport.web ? "a web device" : "a device connection", from: address, http: false,
                                 now: Date().timeIntervalSince1970, logger: logger)
        reply(context, WireEncoder.error(WireReplyError(reason: refusal.message)))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        counters.connectionsOpen.add(-1)
        helloTimer?.cancel()
        if let admission { ledger.closed(admission) }
        if let origin = state.origin {
            if !state.isWaitingForSession, let error = decoder.finish() { reject(context, error) }
            appendBatch(context)
            partialBudget.leave(origin, holding: state.partialBytes)
            connections.unregister(origin, address: state.address, counted: !transport.web)
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
    func decodeAvailable(_ context: ChannelHandlerContext) {
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
            case .success(let message):
                if state.spoke() { proven() }
                handle(message, context: context, now: now)
            case .failure(let error): reject(context, error)
            }
            if !context.channel.isActive { return }
        }
        appendBatch(context)
        accountPartialBytes(context, completedMessage: completedMessage)
    }

    func accountPartialBytes(_ context: ChannelHandlerContext, completedMessage: Bool) {
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

    func handle(_ message: WireMessage, context: ChannelHandlerContext, now: Double) {
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
    func receive(_ content: JournalRecord.Content, message: WireMessage, context: ChannelHandlerContext, now: Double) {
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

    func store(_ content: JournalRecord.Content, in session: EvaluationSession, context: ChannelHandlerContext, now: Double) {
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

    func refuse(_ content: JournalRecord.Content, context: ChannelHandlerContext) {
        counters.eventsRejectedNoSession.add(1)
        let seq = switch content {
        case .event(let event): event.seq
        case .media(let media): media.seq
        }
        reply(context, WireEncoder.error(WireReplyError(reason: state.rejectionReason, seq: seq)))
    }

    func read(context: ChannelHandlerContext) {
        if state.readRequested() { context.read() }
    }

    // MARK: Signals

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
            case .helloTimeout:
                guard !state.hasSpoken else { return }
                ledger.timedOut()
                closeSilent(context, "no hello within \(Int(configuration.helloTimeout)) s (server.hello_timeout): closing")
            case .evicted:
                closeSilent(context, "the server is near its connection budget and this connection has sent nothing: closing")
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

    /// The first whole message: the connection is a device's from now on, and no hello timeout applies.
    func proven() {
        helloTimer?.cancel()
        helloTimer = nil
        if let admission { ledger.became(admission, .captureDevice) }
    }

    func closeSilent(_ context: ChannelHandlerContext, _ reason: String) {
        logger.info("\(reason)")
        reply(context, WireEncoder.error(WireReplyError(reason: reason)))
        context.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        logger.info("connection error: \(error)")
        context.close(promise: nil)
    }
}
