import ControlClient
import ControlProtocol
@testable import ControlService
import Foundation
import SessionModel
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Who is at the other end of the control socket, and what it may make muevald read: the peer's groups
/// from the socket (SO_PEERGROUPS), and import files passed open (SCM_RIGHTS) instead of paths.
@Suite struct ControlAccessTests {
    // MARK: The peer's credentials

    @Test func thePeersCredentialsAndGroupsComeFromTheSocket() throws {
        let (ours, theirs) = try socketPair()
        defer { close(ours); close(theirs) }
        let peer = try PeerCredentials(socket: ours)
        #expect(peer.pid == getpid())
        #expect(peer.uid == getuid())
        #expect(peer.gid == getgid())
        let count = getgroups(0, nil)
        var groups = [gid_t](repeating: 0, count: Int(count))
        #expect(getgroups(count, &groups) == count)
        #expect(Set(peer.supplementaryGroups) == Set(groups))
    }

    /// Another user's process with supplementary groups, as `usermod -aG` makes them: the groups come from
    /// the socket, where /proc (hidden by the unit's ProtectProc=invisible) is not needed.
    @Test(.enabled(if: getuid() == 0, "switching users needs root"))
    func anotherUsersSupplementaryGroupsComeFromTheSocket() async throws {
        let directory = try temporaryDirectory(mode: 0o755)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/peer.sock"
        let listener = try UnixSocket.listen(path)
        defer { close(listener) }
        chmod(path, 0o777)
        // Connects as nobody with two supplementary groups (one of them root's, 0), then waits for the hang-up.
        let child = try BackgroundProcess("/usr/bin/setpriv", [
            "--reuid=65534", "--regid=65534", "--groups=4242,0", "/usr/bin/python3", "-c",
            "import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.recv(1)", path,
        ])
        defer { child.terminate() }
        let connection = try await accept(on: listener)
        defer { close(connection) }
        let peer = try PeerCredentials(socket: connection)
        #expect(peer.uid == 65534)
        #expect(peer.gid == 65534)
        #expect(Set(peer.supplementaryGroups) == [4242, 0])
        #expect(peer.pid != getpid())
        // The decision takes them: a member of the control group (root's here) by a supplementary group.
        #expect(try ControlAccess(groupName: "root").allows(peer))
        #expect(try !ControlAccess(groupName: nil).allows(peer))
    }

    // MARK: Passing open files

    @Test func openFilesCrossASocketAndArriveReadable() throws {
        let (ours, theirs) = try socketPair()
        defer { close(ours); close(theirs) }
        let files = try (0..<3).map { index in try temporaryFile("file \(index)") }
        defer { for file in files { try? FileManager.default.removeItem(atPath: file) } }
        let sent = files.map { open($0, O_RDONLY | O_CLOEXEC) }
        defer { for descriptor in sent { close(descriptor) } }
        try DescriptorPassing.send(sent, over: theirs)
        let received = try DescriptorPassing.receive(3, from: ours, milliseconds: 1000)
        defer { for descriptor in received { close(descriptor) } }
        #expect(received.count == 3)
        for (index, descriptor) in received.enumerated() {
            #expect(!sent.contains(descriptor), "new descriptors in the receiver")
            var bytes = [UInt8](repeating: 0, count: 16)
            let count = pread(descriptor, &bytes, bytes.count, 0)
            #expect(String(decoding: bytes.prefix(max(count, 0)), as: UTF8.self) == "file \(index)")
        }
    }

    @Test func fewerOrMoreFilesThanAskedForAreRefusedAndClosed() throws {
        let (ours, theirs) = try socketPair()
        defer { close(ours) }
        let file = try temporaryFile("one")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let descriptor = open(file, O_RDONLY | O_CLOEXEC)
        defer { close(descriptor) }
        #expect(openDescriptors(of: file) == 1)
        try DescriptorPassing.send([descriptor], over: theirs)
        #expect(throws: DescriptorPassingError.wrongCount(expected: 2, received: 1, truncated: false)) {
            try DescriptorPassing.receive(2, from: ours, milliseconds: 1000)
        }
        try DescriptorPassing.send([descriptor, descriptor, descriptor], over: theirs)
        #expect(throws: DescriptorPassingError.self) { try DescriptorPassing.receive(2, from: ours, milliseconds: 1000) }
        #expect(openDescriptors(of: file) == 1, "what arrived is closed")
        #expect(throws: DescriptorPassingError.timedOut) { try DescriptorPassing.receive(1, from: ours, milliseconds: 50) }
        close(theirs)  // once: a second close could close another test's descriptor of the same number
        #expect(throws: DescriptorPassingError.hungUp) { try DescriptorPassing.receive(1, from: ours, milliseconds: 1000) }
    }

    @Test func importReadsTheFilesTheClientPassesOpen() async throws {
        try await ControlServiceTests.Harness().run { harness in
            let track = try temporaryFile(gpxTrack)
            defer { try? FileManager.default.removeItem(atPath: track) }
            let descriptor = open(track, O_RDONLY | O_CLOEXEC)
            defer { close(descriptor) }
            // The name is only a name: the daemon reads the descriptor.
            let outcomes = try await harness.client.call(
                ControlRequest.Import(files: ["/nowhere/walk.gpx"]), passing: [descriptor])
            #expect(outcomes.map(\.file) == ["walk.gpx"])
            #expect(outcomes.map(\.events) == [2])
        }
    }

    @Test func aPathWithoutItsOpenFileIsRefusedAndNeverOpened() async throws {
        try await ControlServiceTests.Harness().run { harness in
            let secret = try temporaryFile("hunter2-the-database-password\n")
            defer { try? FileManager.default.removeItem(atPath: secret) }
            // What a client before this change sends: an absolute path for muevald to open.
            let refused = await #expect(throws: ControlClientError.self) {
                try await harness.client.call(ControlRequest.Import(files: [secret], descriptors: false))
            }
            #expect(refused?.description.contains("muevald opens no file for its clients") == true, "\(String(describing: refused))")
            #expect(refused?.description.contains("update") == true)
            #expect(refused?.description.contains("hunter2") == false)
        }
    }

    /// The content of a file muEval does not import never comes back: its size and the formats it takes do.
    @Test func anUnknownFileIsDescribedWithoutItsContent() async throws {
        try await ControlServiceTests.Harness().run { harness in
            for (content, kind) in [("hunter2-the-database-password\n", "text"), ("\u{1}\u{2}hunter2", "binary data")] {
                let file = try temporaryFile(content)
                defer { try? FileManager.default.removeItem(atPath: file) }
                let descriptor = open(file, O_RDONLY | O_CLOEXEC)
                defer { close(descriptor) }
                let refused = await #expect(throws: ControlClientError.self) {
                    try await harness.client.call(ControlRequest.Import(files: [file]), passing: [descriptor])
                }
                let message = refused?.description ?? ""
                #expect(!message.contains("hunter2"), "\(message)")
                #expect(message.contains("its format is unknown (\(content.utf8.count) bytes: \(kind))"), "\(message)")
                #expect(message.contains("muEval imports IMUT logs, GPX tracks and muEval exports"), "\(message)")
            }
        }
    }

    /// A client that passes the wrong number of files gets an error, and its connection goes on.
    @Test func aWrongNumberOfFilesFailsTheImportAndTheConnectionGoesOn() async throws {
        try await ControlServiceTests.Harness().run { harness in
            let track = try temporaryFile(gpxTrack)
            defer { try? FileManager.default.removeItem(atPath: track) }
            let descriptor = open(track, O_RDONLY | O_CLOEXEC)
            defer { close(descriptor) }
            let socket = try UnixSocket.connect(harness.client.socketPath)
            defer { close(socket) }
            var reader = LineReader(socket: socket)
            try reader.send(#"{"command":"import","files":["a.gpx","b.gpx"],"descriptors":true}"#)
            #expect(try reader.line() == #"{"descriptors":2}"#)
            try DescriptorPassing.send([descriptor], over: socket)
            let failed = try reader.line()
            #expect(failed.contains(#""ok":false"#) && failed.contains("expected 2 open files, received 1"), "\(failed)")
            try reader.send(#"{"command":"sessions"}"#)
            let next = try JSONDecoder().decode(ControlReply<[SessionRecord]>.self, from: Data(try reader.line().utf8))
            #expect(next.ok == true && next.result == [])
        }
    }
}

private let gpxTrack = """
    <gpx version="1.1"><trk><name>walk</name><trkseg>
    <trkpt lat="48.1" lon="11.5"><time>2014-07-05T12:03:20Z</time></trkpt>
    <trkpt lat="48.2" lon="11.6"><time>2014-07-05T12:03:21Z</time></trkpt>
    </trkseg></trk></gpx>
    """

/// Close-on-exec: a child another test starts meanwhile must not hold an end open (the hang-up test counts on it).
private func socketPair() throws -> (CInt, CInt) {
    var pair: [CInt] = [-1, -1]
    guard socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
        throw POSIXError(.init(rawValue: errno) ?? .EIO)
    }
    return (pair[0], pair[1])
}

private func temporaryDirectory(mode: Int) throws -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("access-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: mode])
    return directory
}

private func temporaryFile(_ content: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("file-\(UUID().uuidString)").path
    try content.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// How many of this process's descriptors have `path` open (other tests run beside, with files of their own).
private func openDescriptors(of path: String) -> Int {
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return descriptors.count { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == path }
}

/// The first connection to the non-blocking listener `socket`, within 30 s.
private func accept(on socket: CInt) async throws -> CInt {
    let deadline = ContinuousClock.now + .seconds(30)
    while true {
        let connection = Glibc.accept(socket, nil, nil)
        if connection >= 0 { return connection }
        guard ContinuousClock.now < deadline else { throw POSIXError(.ETIMEDOUT) }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// A blocking line client, for what `ControlClient` never does.
private struct LineReader {
    let socket: CInt
    var buffer: [UInt8] = []

    init(socket: CInt) {
        self.socket = socket
    }

    func send(_ line: String) throws {
        let bytes = Array((line + "\n").utf8)
        guard write(socket, bytes, bytes.count) == bytes.count else { throw POSIXError(.EIO) }
    }

    /// The next line, within 30 s.
    mutating func line() throws -> String {
        var entry = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        while !buffer.contains(UInt8(ascii: "\n")) {
            guard poll(&entry, 1, 30_000) == 1 else { throw POSIXError(.ETIMEDOUT) }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(socket, &chunk, chunk.count)
            guard count > 0 else { throw POSIXError(.ECONNRESET) }
            buffer += chunk.prefix(count)
        }
        let end = buffer.firstIndex(of: UInt8(ascii: "\n"))!
        defer { buffer.removeSubrange(...end) }
        return String(decoding: buffer[..<end], as: UTF8.self)
    }
}

/// A process that runs until it is terminated.
private final class BackgroundProcess {
    private let process = Process()

    init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        try process.run()
    }

    func terminate() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}
