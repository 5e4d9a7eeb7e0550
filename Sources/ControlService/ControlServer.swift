public import ControlProtocol
public import SessionModel
public import SessionCore
internal import Foundation
public import Logging
internal import NIOConcurrencyHelpers
public import NIOCore
internal import NIOExtras
internal import NIOPosix
public import ServiceLifecycle
#if canImport(Glibc)
internal import Glibc
#endif

/// The Unix control socket: one JSON request per line, answered by `ControlCommands`.
public final class ControlServer: Service {
    private let path: String
    private let access: ControlAccess
    private let commands: ControlCommands
    private let group: EventLoopGroup
    private let logger: Logger
    private let onListening: @Sendable () -> Void
    private let maxRequestBytes: Int
    /// Counts the connections for `status`'s descriptors; they are served from the budget's reserve.
    private let ledger: ConnectionLedger?
    /// The listener in use; replaced when the socket file was removed and is made anew.
    private let listener = NIOLockedValueBox<UnixListener?>(nil)
    private let rebinds: AsyncStream<Void>
    private let rebindRequests: AsyncStream<Void>.Continuation

    public init(path: String, access: ControlAccess, commands: ControlCommands, group: EventLoopGroup, logger: Logger,
                maxRequestBytes: Int = ControlLimits.maxRequestBytes, ledger: ConnectionLedger? = nil,
                onListening: @escaping @Sendable () -> Void = {}) {
        self.maxRequestBytes = maxRequestBytes
        self.ledger = ledger
        self.path = path
        self.access = access
        self.commands = commands
        self.group = group
        self.logger = logger
        self.onListening = onListening
        (rebinds, rebindRequests) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Makes the socket anew if its file was removed (an over-eager cleanup of /run): on SIGHUP.
    public func recreateSocketIfMissing() {
        rebindRequests.yield()
    }

    public func run() async throws {
        try prepareSocketPath()
        let first = try bind()
        logger.notice("control socket at \(path)")
        onListening()
        defer { unlink(path) }

        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { tasks in
                tasks.addTask { await self.accept(on: first) }
                for await _ in rebinds where !FileManager.default.fileExists(atPath: path) {
                    do {
                        let replacement = try bind()
                        tasks.addTask { await self.accept(on: replacement) }
                        logger.notice("recreated the control socket at \(path), which had been removed")
                    } catch {
                        logger.error("cannot recreate the control socket at \(path): \(error)")
                    }
                }
            }
        } onGracefulShutdown: {
            self.rebindRequests.finish()
            self.listener.withLockedValue { $0 }?.close()
            // Live tails would otherwise keep their connections, and the daemon, running.
            self.commands.shutdown()
        }
    }

    /// Listens at `path`, closing the listener it replaces.
    private func bind() throws -> UnixListener {
        let server = try UnixListener(path: path)
        // 0660: the owner and the configured group; the peer check below is the real gate.
        chmod(path, 0o660)
        if let gid = access.groupID { chown(path, UInt32.max, gid) }
        listener.withLockedValue { current in
            current?.close()
            current = server
        }
        return server
    }

    private func accept(on server: UnixListener) async {
        await withDiscardingTaskGroup { connections in
            for await socket in server.connections {
                connections.addTask { await self.serve(socket) }
            }
        }
    }

    /// Refuses to start over a live daemon's socket, and removes a dead one's.
    private func prepareSocketPath() throws {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o750])
        guard FileManager.default.fileExists(atPath: path) else { return }
        if ControlSocketPath.isListening(path) { throw ControlServerError.alreadyRunning(path) }
        try FileManager.default.removeItem(atPath: path)
    }

    /// Serves the connection `socket`: its peer's credentials first, read from the descriptor, then
    /// requests through NIO (which owns and closes the descriptor from then on).
    private func serve(_ socket: CInt) async {
        ledger?.controlOpened()
        defer { ledger?.controlClosed() }
        let peer: PeerCredentials
        do {
            peer = try PeerCredentials(socket: socket)
        } catch {
            logger.warning("control: refused a connection: \(error)")
            close(socket)
            return
        }
        do {
            let maxRequestBytes = maxRequestBytes
            let connection = try await ClientBootstrap(group: group).withConnectedSocket(socket) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LineBasedFrameDecoder(), maximumBufferSize: maxRequestBytes))
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
            try await connection.executeThenClose { inbound, outbound in
                let writer = ControlReplyWriter(outbound: outbound, closeFuture: connection.channel.closeFuture)
                guard access.allows(peer) else {
                    logger.warning("control: refused uid \(peer.uid) (pid \(peer.pid))")
                    try await writer.fail(access.denial(for: peer))
                    return
                }
                do {
                    for try await line in inbound {
                        let request: ControlRequest
                        do {
                            request = try JSONDecoder().decode(ControlRequest.self, from: Data(line.readableBytesView))
                        } catch {
                            try await writer.fail("not a valid request: \(ControlRequestError.describe(error)) (docs/CONTROL.md)")
                            continue
                        }
                        let files = PassedFiles(socket: socket, channel: connection.channel, writer: writer)
                        if try await commands.execute(request, from: peer, writer: writer, files: files) == .close { return }
                    }
                } catch is ByteToMessageDecoderError.PayloadTooLargeError {
                    logger.warning("control: refused a request line longer than \(maxRequestBytes) bytes from uid \(peer.uid) (pid \(peer.pid))")
                    try await writer.fail("request line longer than \(maxRequestBytes) bytes (control.max_request_bytes): closing")
                }
            }
        } catch {
            logger.debug("control connection ended: \(error)")
        }
    }
}

public enum ControlServerError: Error, CustomStringConvertible {
    case alreadyRunning(String)

    public var description: String {
        switch self {
        case .alreadyRunning(let path): "another muevald already listens on \(path): stop it, or give this one --socket PATH"
        }
    }
}

/// Writes reply lines to one control connection.
public struct ControlReplyWriter: Sendable {
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    /// Completes when the client hangs up: a long-running reply (tail) stops then.
    let closeFuture: EventLoopFuture<Void>

    /// The final line of `request`: its result, of the type its command answers.
    public func succeed<Payload: ControlPayload>(_ request: Payload, with result: Payload.Reply) async throws {
        try await write(ControlReply(ok: true, result: result))
    }

    public func fail(_ message: String) async throws {
        try await write(ControlReply<Empty>(ok: false, error: message))
    }

    public func chunk(_ text: String) async throws {
        try await write(ControlReply<Empty>(chunk: text))
    }

    /// A page of `events`' result, before the final line.
    public func events(_ page: [StoredEvent]) async throws {
        try await write(ControlReply<Empty>(events: page))
    }

    /// Transcript segments of `events`' result, between its pages.
    public func speech(_ segments: [TranscriptSegment]) async throws {
        try await write(ControlReply<Empty>(speech: segments))
    }

    /// Asks the client for `count` open files (`import`).
    func descriptors(_ count: Int) async throws {
        try await write(ControlReply<Empty>(descriptors: count))
    }

    /// A piece of one of `media`'s files.
    public func media(_ piece: MediaPiece) async throws {
        try await write(ControlReply<Empty>(media: piece))
    }

    /// Tail lines, written in one go; waits while the client does not read (its buffer fills, not ours).
    public func tail(_ lines: [TailLine]) async throws {
        guard !lines.isEmpty else { return }
        var json: [UInt8] = []
        for line in lines {
            TailLineJSON.write(line, into: &json)
            json.append(UInt8(ascii: "\n"))
        }
        let buffer = ByteBuffer(bytes: json)
        try await outbound.write(buffer)
    }

    private func write<R>(_ reply: ControlReply<R>) async throws {
        var line = try JSONEncoder().encode(reply)
        line.append(UInt8(ascii: "\n"))
        try await outbound.write(ByteBuffer(bytes: line))
    }
}
