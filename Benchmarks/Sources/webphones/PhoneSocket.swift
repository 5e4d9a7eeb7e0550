import Glibc
import NIOCore
import NIOWebSocket

/// What a phone's socket tells its phone, on the event loop.
protocol PhoneSocketEvents: AnyObject {
    /// The payload of a text message (or of its continuation).
    func received(_ data: ByteBuffer, on socket: PhoneSocket)
    /// A close frame, or the stream's end: the phone's reader is done (async_websocket.py raises Closed).
    func ended(_ socket: PhoneSocket)
}

/// One upgraded WebSocket of a phone, as async_websocket.py's AsyncWebSocket: masked text frames out, text
/// in, pings answered, and the ways a phone's socket ends (a goodbye, a FIN, an RST, or silence).
final class PhoneSocket: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// The longest server frame read: muevald's replies are acks, welcomes and errors; anything near this is a
    /// broken stream, not a reply (async_websocket.py's MAX_SERVER_FRAME).
    static let maxServerFrame = 16 << 20
    /// The longest client frame header (2 + 8 bytes of length + 4 of mask): left free before a payload, so that
    /// NIO's encoder writes the header there and the frame goes out as one buffer.
    private static let headroom = 14

    private let events: any PhoneSocketEvents
    private var context: ChannelHandlerContext?
    /// A text message's continuation frames are its text too; others' are not.
    private var continuingText = false
    private var masks: MaskKeys

    init(events: any PhoneSocketEvents) {
        self.events = events
        masks = MaskKeys(seed: UInt64.random(in: .min ... .max))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            continuingText = !frame.fin
            events.received(frame.unmaskedData, on: self)
        case .continuation where continuingText:
            continuingText = !frame.fin
            events.received(frame.unmaskedData, on: self)
        case .ping:
            write(.pong, frame.unmaskedData)
        case .connectionClose:
            events.ended(self)
        default:
            break  // pongs, binary messages: a phone reads text
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        events.ended(self)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)  // a broken stream (a frame too long, a reset): its end follows
    }

    // MARK: Sending

    /// async_websocket.py's `buffered < MAX_BUFFERED`: false while 1 MiB waits unsent (the write watermark).
    var isWritable: Bool { context?.channel.isWritable ?? false }

    /// An empty buffer for a text frame's payload, with room for the frame's header before it.
    func payloadBuffer(capacity: Int) -> ByteBuffer {
        var buffer = (context?.channel.allocator ?? ByteBufferAllocator()).buffer(capacity: capacity + Self.headroom)
        buffer.moveWriterIndex(forwardBy: Self.headroom)
        buffer.moveReaderIndex(forwardBy: Self.headroom)
        return buffer
    }

    /// One text message; never waits (as a page's socket.send); on a socket already closed, nothing.
    func send(_ payload: ByteBuffer) {
        write(.text, payload)
    }

    func send(_ text: String) {
        var buffer = payloadBuffer(capacity: text.utf8.count)
        buffer.writeString(text)
        write(.text, buffer)
    }

    /// The orderly end after the last ack: `<goodbye/>`, a close frame (1000), then the socket, once what was
    /// written is sent (async_websocket.py's `close()`: asyncio flushes before it closes).
    func sayGoodbye() {
        guard let context, context.channel.isActive else { return }
        send("<goodbye/>\n")
        var code = payloadBuffer(capacity: 2)
        code.writeInteger(UInt16(1000))
        let promise = context.eventLoop.makePromise(of: Void.self)
        write(.connectionClose, code, promise: promise)
        promise.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    /// The socket dies as a phone's does, without a goodbye or a close frame. `close`: a FIN (a page's tab
    /// killed); `reset`: an RST (SO_LINGER 0: an address gone from under it); `silent`: nothing at all (a
    /// phone off the network): left open and unread, so that the server learns of it only by its own pings;
    /// the caller keeps it and aborts it at the end.
    func drop(_ kind: String) {
        guard let context else { return }
        switch kind {
        case "silent":
            continuingText = false
            try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
        case "reset":
            guard let provider = context.channel as? any SocketOptionProvider else { return abort() }
            provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        default:
            abort()
        }
    }

    /// Closes the socket at once, whatever is unsent.
    func abort() {
        context?.close(promise: nil)
    }

    private func write(_ opcode: WebSocketOpcode, _ data: ByteBuffer, promise: EventLoopPromise<Void>? = nil) {
        guard let context else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        let frame = WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(using: &masks), data: data)
        context.writeAndFlush(wrapOutboundOut(frame), promise: promise)
    }
}

/// Client frames' mask keys (RFC 6455 wants them unpredictable to a page's script; no page runs here): a
/// xorshift generator, so that a frame costs no getrandom call.
struct MaskKeys: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed | 1
    }

    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
