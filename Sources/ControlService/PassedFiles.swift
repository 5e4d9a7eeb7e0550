internal import ControlProtocol
internal import NIOCore
internal import NIOPosix

/// The open files a client passes over its control connection (`import` with `descriptors`), so that
/// muevald reads only what its client may read.
public struct PassedFiles: Sendable {
    let socket: CInt
    let channel: Channel
    let writer: ControlReplyWriter

    /// How long a client has to pass its files once asked (muevalctl does at once).
    static let waitMilliseconds: Int32 = 10_000

    /// Asks the client for `count` open files and receives them, beside NIO on the same socket. NIO
    /// reads with read(2), which would drop them, so it reads nothing until they are in: the client
    /// sends them only after the `descriptors` line, written once reading paused.
    func receive(_ count: Int) async throws -> [CInt] {
        try await channel.setOption(ChannelOptions.autoRead, value: false).get()
        do {
            try await writer.descriptors(count)
            let socket = socket
            let descriptors = try await NIOThreadPool.singleton.runIfActive {
                try DescriptorPassing.receive(count, from: socket, milliseconds: Self.waitMilliseconds)
            }
            try await channel.setOption(ChannelOptions.autoRead, value: true).get()
            return descriptors
        } catch {
            try? await channel.setOption(ChannelOptions.autoRead, value: true).get()
            throw error
        }
    }
}
