internal import NIOCore
internal import NIOWebSocket

/// How a device's bytes reach its `DeviceConnectionHandler`.
struct DeviceTransport: Sendable {
    /// The device's address when the socket's peer is not the device (a trusted proxy before the console).
    var address: String?
    /// A web device: it gets a session only by an invitation or a pairing code (`capture.web_require_code`).
    var mustPresentCode: Bool
    /// Counted in the descriptor budget by the listener that accepted it (the console's), not again.
    var admitted: Bool
    /// A WebSocket: its address's web devices were counted at the upgrade (`capture.web_max_per_address`),
    /// not against `server.max_connections_per_address`.
    var web = false

    static let tcp = DeviceTransport(address: nil, mustPresentCode: false, admitted: false)
}

/// Turns a WebSocket into the byte stream `DeviceConnectionHandler` reads, so that a browser's device
/// goes through the same decoder, limits, state machine, group commit and acks as a TCP one: the
/// payloads of text messages (one or more XML messages each, docs/PROTOCOL.md "WebSocket") in, each reply
/// out as a text message. Pings are answered here; a close frame ends the input as a TCP half-close does,
/// and closing the connection sends a close frame first.
///
/// Behind the console, the console's WebSocket handler comes after the device handler and pings the
/// browser: its frames and the browser's pongs go around the device handler (`WebSocketControlLane`),
/// which reads and writes nothing but bytes.
final class WebSocketDeviceFrames: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = WebSocketFrame

    /// The data of a message that arrives in pieces is continued by continuation frames: only a text
    /// message's are taken.
    private var continuingText = false
    private var closeSent = false
    private var context: ChannelHandlerContext?
    /// The console's side of the device handler, when there is one.
    var lane: WebSocketControlLane?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        lane = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            continuingText = !frame.fin
            context.fireChannelRead(wrapInboundOut(frame.unmaskedData))
        case .continuation where continuingText:
            continuingText = !frame.fin
            context.fireChannelRead(wrapInboundOut(frame.unmaskedData))
        case .ping:
            var pong = WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)
            pong.maskKey = nil
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .pong:
            lane?.pass(frame)
        case .connectionClose:
            // What the device sent before is handled, then the device handler closes (below: our close frame).
            context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        default:
            // Binary messages (and their continuations): the protocol is XML text.
            sendClose(context, code: .unacceptableData, reason: "muEval devices send text messages (docs/PROTOCOL.md)")
            context.close(promise: nil)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = WebSocketFrame(fin: true, opcode: .text, data: unwrapOutboundIn(data))
        context.write(wrapOutboundOut(frame), promise: promise)
    }

    /// A frame of the console's handler, written from here toward the socket.
    func writeAround(_ frame: WebSocketFrame, promise: EventLoopPromise<Void>?) {
        guard let context else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        if frame.opcode == .connectionClose {
            guard !closeSent else {
                promise?.succeed()
                return
            }
            closeSent = true
        }
        context.write(wrapOutboundOut(frame), promise: promise)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .all { sendClose(context, code: .normalClosure, reason: "") }
        context.close(mode: mode, promise: promise)
    }

    private func sendClose(_ context: ChannelHandlerContext, code: WebSocketErrorCode, reason: String) {
        guard !closeSent, context.channel.isActive else { return }
        closeSent = true
        var data = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)), promise: nil)
    }
}

/// Right after the device handler, before the console's WebSocket handler: the pongs the browser sends go
/// on to it, and the frames it writes (pings, its close) go around the device handler to the socket.
final class WebSocketControlLane: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame

    private let frames: WebSocketDeviceFrames
    private var context: ChannelHandlerContext?

    init(frames: WebSocketDeviceFrames) {
        self.frames = frames
        frames.lane = self
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func pass(_ frame: WebSocketFrame) {
        context?.fireChannelRead(NIOAny(frame))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        frames.writeAround(unwrapOutboundIn(data), promise: promise)
    }
}
