internal import MuEvalWire
internal import NIOCore
internal import WireProtocol

/// What the server says to the device: acknowledgements, errors, and when they are flushed.
extension DeviceConnectionHandler {
    func sendAck(_ context: ChannelHandlerContext, _ seq: Int64) {
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: WireEncoder.ack(seq: seq))), promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let seq = state.becameWritable() { sendAck(context, seq) }
        context.fireChannelWritabilityChanged()
    }

    /// Sends a reply unless the device is not reading its replies: then it is counted and dropped,
    /// so that a device that never reads can never make the server buffer without bound.
    func reply(_ context: ChannelHandlerContext, _ bytes: [UInt8]) {
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

    func flushReplies(_ context: ChannelHandlerContext) {
        guard repliesUnflushed else { return }
        repliesUnflushed = false
        context.flush()
    }

    func reject(_ context: ChannelHandlerContext, _ error: WireError) {
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
}
