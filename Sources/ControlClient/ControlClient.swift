public import ControlProtocol
public import SessionModel
internal import Foundation
internal import NIOCore
internal import NIOExtras
internal import NIOPosix

#if canImport(Glibc)
internal import Glibc
#endif

public enum ControlClientError: Error, CustomStringConvertible, Equatable {
    case daemonNotRunning(path: String)
    /// The socket's file permissions keep this user out; `group` is the socket's group, to join.
    case permissionDenied(path: String, group: String?)
    /// The daemon carried out nothing and said why.
    case refused(String)
    case connectionLost
    case unreadableReply(String)

    public var description: String {
        switch self {
        case .daemonNotRunning(let path):
            "muevald is not running (no control socket at \(path)); start it with `make run` or `systemctl start muevald`, or point --socket / MUEVAL_SOCKET at it"
        case .permissionDenied(let path, let group?):
            "permission denied on \(path): join the group \"\(group)\" (sudo usermod -aG \(group) $USER) and log in again"
        case .permissionDenied(let path, nil):
            "permission denied on \(path): ask for membership of the daemon's control group"
        case .refused(let message): message
        case .connectionLost: "muevald closed the control connection before answering (did it stop?)"
        case .unreadableReply(let reason): "cannot read muevald's reply: \(reason)"
        }
    }
}

/// A connection to the daemon's control socket.
public struct ControlClient: Sendable {
    public let socketPath: String

    public init(socketPath: String) {
        self.socketPath = socketPath
    }

    /// A reply line's envelope; a line that is not one is an unreadable reply. Outside `call`'s closure: Swift 6.3
    /// took a do/catch there for one that cannot throw (and warned of an unreachable catch).
    private static func envelope<R: Decodable>(of line: ByteBuffer, as: R.Type) throws(ControlClientError) -> ControlReply<R> {
        do {
            return try JSONDecoder().decode(ControlReply<R>.self, from: Data(line.readableBytesView))
        } catch {
            throw .unreadableReply("\(error)")
        }
    }

    /// Sends one request and decodes its result, the payload's `Reply`; stream lines before it go to
    /// `onChunk` (export), `onTail` (tail), `onEvents` (events, a page at a time), `onSpeech` (events'
    /// transcript) and `onMedia` (media). `passing`: open files the daemon asks for (import with
    /// `descriptors`), sent when it does; they stay the caller's to close.
    public func call<Payload: ControlPayload>(_ payload: Payload, passing files: [CInt] = [],
                                              onChunk: (String) throws -> Void = { _ in },
                                              onTail: (TailLine) throws -> Void = { _ in },
                                              onEvents: ([StoredEvent]) throws -> Void = { _ in },
                                              onSpeech: ([TranscriptSegment]) throws -> Void = { _ in },
                                              onMedia: (MediaPiece) throws -> Void = { _ in }) async throws -> Payload.Reply {
        typealias R = Payload.Reply
        let (channel, socket) = try await connect()
        return try await channel.executeThenClose { inbound, outbound in
            /// The request's result once its final line came; nil for a stream line.
            func handle(_ reply: ByteBuffer) throws -> R? {
                let envelope = try Self.envelope(of: reply, as: R.self)
                if let chunk = envelope.chunk {
                    try onChunk(chunk)
                    return nil
                }
                if let line = envelope.tail {
                    try onTail(line)
                    return nil
                }
                if let page = envelope.events {
                    try onEvents(page)
                    return nil
                }
                if let speech = envelope.speech {
                    try onSpeech(speech)
                    return nil
                }
                if let piece = envelope.media {
                    try onMedia(piece)
                    return nil
                }
                if let count = envelope.descriptors {
                    guard count == files.count else {
                        throw ControlClientError.unreadableReply("muevald asks for \(count) open files, this request has \(files.count)")
                    }
                    // Beside NIO, on the same socket: NIO's stream channels carry no control messages.
                    // NIO sends nothing meanwhile, as the request is written and the reply not yet come.
                    try DescriptorPassing.send(files, over: socket)
                    return nil
                }
                if envelope.ok == true, let result = envelope.result { return result }
                throw ControlClientError.refused(envelope.error ?? "muevald refused the request")
            }

            var line = try JSONEncoder().encode(payload.request)
            line.append(UInt8(ascii: "\n"))
            // A daemon that refuses the peer answers and closes before reading: its answer still counts.
            try? await outbound.write(ByteBuffer(bytes: line))
            do {
                for try await reply in inbound {
                    if let result = try handle(reply) { return result }
                }
            } catch is ByteToMessageDecoderError.PayloadTooLargeError {
                throw ControlClientError.unreadableReply("a reply line is longer than \(ControlLimits.maxReplyLineBytes) bytes")
            }
            throw ControlClientError.connectionLost
        }
    }

    /// The connection, and its descriptor for passing open files (NIO owns and closes it).
    private func connect() async throws -> (NIOAsyncChannel<ByteBuffer, ByteBuffer>, CInt) {
        switch ControlSocketPath.presence(socketPath) {
        case .present: break
        case .hidden: throw ControlClientError.permissionDenied(path: socketPath, group: Self.groupName(of: socketPath))
        case .absent: throw ControlClientError.daemonNotRunning(path: socketPath)
        }
        let socket: CInt
        do {
            socket = try UnixSocket.connect(socketPath)
        } catch where error.code == EACCES {
            throw ControlClientError.permissionDenied(path: socketPath, group: Self.groupName(of: socketPath))
        } catch where error.code == ENAMETOOLONG {
            throw ControlClientError.refused(error.description)
        } catch {
            throw ControlClientError.daemonNotRunning(path: socketPath)
        }
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).withConnectedSocket(socket) { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(
                    ByteToMessageHandler(LineBasedFrameDecoder(), maximumBufferSize: ControlLimits.maxReplyLineBytes))
                return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
        return (channel, socket)
    }

    /// The name of the group that owns `path`, or its folder when `path` cannot be looked at, if it has one.
    static func groupName(of path: String) -> String? {
        var info = stat()
        let folder = (path as NSString).deletingLastPathComponent
        guard stat(path, &info) == 0 || stat(folder, &info) == 0,
              // Root's group is no group to join: the daemon has no control group configured then.
              info.st_gid != 0, let group = getgrgid(info.st_gid) else { return nil }
        return String(cString: group.pointee.gr_name)
    }

}
