#if canImport(Glibc)
internal import Glibc
#endif

/// Open files handed over a connected Unix socket (`SCM_RIGHTS`): `import` passes the files muevalctl
/// opened, so that muevald reads only what its client may read (docs/CONTROL.md). One message of one
/// byte carries all of them.
public enum DescriptorPassing {
    /// The most descriptors one message carries (Linux's `SCM_MAX_FD`).
    public static let maxDescriptors = 253

    /// Sends `descriptors` over `socket`, waiting while its send buffer is full.
    public static func send(_ descriptors: [CInt], over socket: CInt) throws(DescriptorPassingError) {
        guard !descriptors.isEmpty, descriptors.count <= maxDescriptors else { throw .tooMany(descriptors.count) }
        let control = ControlBuffer(descriptors: descriptors.count)
        defer { control.deallocate() }
        control.setRights(descriptors)
        while true {
            let (sent, _) = control.withOneByteMessage { sendmsg(socket, $0, CInt(MSG_NOSIGNAL)) }
            if sent == 1 { return }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN: _ = try wait(for: socket, events: Int16(POLLOUT), milliseconds: -1)
            default: throw .failed(code)
            }
        }
    }

    /// Receives exactly `count` descriptors from `socket`, waiting at most `milliseconds` for them.
    /// The caller owns what is returned; whatever arrives otherwise (too few, too many, none) is closed.
    public static func receive(_ count: Int, from socket: CInt, milliseconds: Int32) throws(DescriptorPassingError) -> [CInt] {
        guard count > 0, count <= maxDescriptors else { throw .tooMany(count) }
        let control = ControlBuffer(descriptors: count)
        defer { control.deallocate() }
        var flags: Int32 = 0
        while true {
            let (received, messageFlags) = control.withOneByteMessage { recvmsg(socket, $0, CInt(MSG_CMSG_CLOEXEC | Int(MSG_DONTWAIT))) }
            flags = messageFlags
            if received > 0 { break }
            if received == 0 { throw .hungUp }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN:
                guard try wait(for: socket, events: Int16(POLLIN), milliseconds: milliseconds) else { throw .timedOut }
            default: throw .failed(code)
            }
        }
        let descriptors = control.rights()
        guard descriptors.count == count, flags & Int32(MSG_CTRUNC) == 0 else {
            for descriptor in descriptors { close(descriptor) }
            throw .wrongCount(expected: count, received: descriptors.count, truncated: flags & Int32(MSG_CTRUNC) != 0)
        }
        return descriptors
    }

    /// Waits until `socket` is ready for `events`; false when `milliseconds` passed first (-1: no limit).
    private static func wait(for socket: CInt, events: Int16, milliseconds: Int32) throws(DescriptorPassingError) -> Bool {
        var entry = pollfd(fd: socket, events: events, revents: 0)
        while true {
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return true }
            if ready == 0 { return false }
            guard errno == EINTR else { throw .failed(errno) }
        }
    }
}

/// A message's control data: room for one `SCM_RIGHTS` header and its descriptors, laid out as
/// <sys/socket.h>'s CMSG macros (not available to Swift) lay it out.
private struct ControlBuffer {
    let buffer: UnsafeMutableRawBufferPointer

    /// Calls `transfer` (sendmsg or recvmsg) with a message of one data byte and this control data;
    /// its result, and the message's flags after it.
    func withOneByteMessage(_ transfer: (UnsafeMutablePointer<msghdr>) -> Int) -> (result: Int, flags: Int32) {
        var byte: UInt8 = 0
        return withUnsafeMutablePointer(to: &byte) { byte in
            var part = iovec(iov_base: UnsafeMutableRawPointer(byte), iov_len: 1)
            return withUnsafeMutablePointer(to: &part) { part in
                var message = msghdr()
                message.msg_iov = part
                message.msg_iovlen = 1
                message.msg_control = buffer.baseAddress
                message.msg_controllen = buffer.count
                let result = transfer(&message)
                return (result, message.msg_flags)
            }
        }
    }

    private static let header = aligned(MemoryLayout<cmsghdr>.size)

    private static func aligned(_ bytes: Int) -> Int {
        let word = MemoryLayout<Int>.size
        return (bytes + word - 1) & ~(word - 1)
    }

    init(descriptors: Int) {
        buffer = .allocate(byteCount: Self.header + Self.aligned(descriptors * MemoryLayout<CInt>.size),
                           alignment: MemoryLayout<cmsghdr>.alignment)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
    }

    func deallocate() { buffer.deallocate() }

    func setRights(_ descriptors: [CInt]) {
        var header = cmsghdr()
        header.cmsg_len = Self.header + descriptors.count * MemoryLayout<CInt>.size
        header.cmsg_level = SOL_SOCKET
        header.cmsg_type = CInt(SCM_RIGHTS)
        buffer.storeBytes(of: header, as: cmsghdr.self)
        for (index, descriptor) in descriptors.enumerated() {
            buffer.storeBytes(of: descriptor, toByteOffset: Self.header + index * MemoryLayout<CInt>.size, as: CInt.self)
        }
    }

    /// Every descriptor in every `SCM_RIGHTS` header the kernel filled in.
    func rights() -> [CInt] {
        var descriptors: [CInt] = []
        var offset = 0
        while offset + Self.header <= buffer.count {
            let header = buffer.loadUnaligned(fromByteOffset: offset, as: cmsghdr.self)
            guard header.cmsg_len >= Self.header, offset + header.cmsg_len <= buffer.count else { break }
            if header.cmsg_level == SOL_SOCKET, header.cmsg_type == CInt(SCM_RIGHTS) {
                let count = (header.cmsg_len - Self.header) / MemoryLayout<CInt>.size
                for index in 0..<count {
                    descriptors.append(buffer.loadUnaligned(fromByteOffset: offset + Self.header + index * MemoryLayout<CInt>.size, as: CInt.self))
                }
            }
            offset += Self.aligned(header.cmsg_len)
        }
        return descriptors
    }
}

public enum DescriptorPassingError: Error, Equatable, CustomStringConvertible {
    case tooMany(Int)
    case hungUp
    case timedOut
    case wrongCount(expected: Int, received: Int, truncated: Bool)
    case failed(CInt)

    public var description: String {
        switch self {
        case .tooMany(let count): "\(count) files at once: one import passes 1 to \(DescriptorPassing.maxDescriptors)"
        case .hungUp: "the client hung up before passing its files"
        case .timedOut: "the client did not pass its files in time"
        case .wrongCount(let expected, let received, let truncated):
            "expected \(expected) open files, received \(truncated ? "more" : String(received)): one per name in files"
        case .failed(let code): "passing open files failed: \(String(cString: strerror(code)))"
        }
    }
}
