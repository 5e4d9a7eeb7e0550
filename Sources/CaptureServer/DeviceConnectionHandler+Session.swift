internal import Foundation
internal import JournalStorage
internal import MuEvalWire
internal import NIOCore
internal import SessionCore
internal import WireProtocol

/// The connection's session: asking the registry for it, waiting while one is opened, and handing
/// each read's events to its journal.
extension DeviceConnectionHandler {
    /// Asks the registry for the device's session. Nil when it is refused, or being opened off the
    /// event loop (`state.isWaitingForSession`): then this connection's reads are held and decoding
    /// stops until `ConnectionSignal.sessionOpened` arrives.
    func attach(_ device: ConnectingDevice, context: ChannelHandlerContext, now: Double) -> EvaluationSession? {
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

    func carryOut(_ action: DeviceConnectionStateMachine.AttachAction, context: ChannelHandlerContext) -> EvaluationSession? {
        switch action {
        case .welcome(let session):
            reply(context, WireEncoder.welcome(session.welcome(console: registry.consoleAddress.current)))
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
    func sessionOpened(_ outcome: AttachOutcome, context: ChannelHandlerContext) {
        reading = true
        let action = state.sessionOpened(outcome)
        let session = carryOut(action, context: context)
        if session == nil, !batch.isEmpty {
            // Events that were on their way to a stopped session, and have no next one.
            refuse(batch, context: context)
            batch.removeAll(keepingCapacity: true)
        } else if case .rejected = action, waitingMessage == nil {
            // The hello waited (an invitation looked up, a session opened): it gets the refusal, as at once.
            reply(context, WireEncoder.error(WireReplyError(reason: state.rejectionReason)))
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
    func finishInput(_ context: ChannelHandlerContext) {
        if let error = decoder.finish() { reject(context, error) }
        appendBatch(context)
        flushReplies(context)
        context.close(promise: nil)
    }

    /// Hands the events of this read to the journal; holds reads when the journal is full.
    func appendBatch(_ context: ChannelHandlerContext) {
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

    func refuse(_ records: [JournalRecord], context: ChannelHandlerContext) {
        counters.eventsRejectedNoSession.add(records.count)
        let seq = records.compactMap(\.seq).max()
        reply(context, WireEncoder.error(WireReplyError(
            reason: "\(records.count) events not stored: \(state.rejectionReason)", seq: seq)))
    }
}
