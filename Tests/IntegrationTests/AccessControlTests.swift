import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// Recordings are for authorised developers only (thesis 2.5.4): private files, and a control
/// socket for the daemon's user, root and one configured group, checked with the kernel's
/// credentials of the peer.
final class AccessControlTests: XCTestCase {
    private static let group = "muevaltest"

    /// Runs `muevalctl ARGUMENTS` as the user nobody, optionally in the test group.
    private func asNobody(_ daemon: TestDaemon, inGroup: Bool, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        // A copy nobody may execute, outside directories it may not enter.
        let tool = daemon.directory + "/muevalctl"
        if !FileManager.default.fileExists(atPath: tool) {
            try FileManager.default.copyItem(atPath: TestDaemon.executable("muevalctl"), toPath: tool)
        }
        let identity = ["--reuid=65534", "--regid=65534"] + (inGroup ? ["--groups=\(Self.group)"] : ["--clear-groups"])
        return try runProcess("/usr/bin/setpriv", identity + [tool] + arguments + ["--socket", daemon.socketPath])
    }

    func testOnlyTheOwnerRootAndTheControlGroupMayUseTheSocketAndFilesArePrivate() async throws {
        guard getuid() == 0 else {
            print("⚠️  SKIPPING the access-control test: switching users needs root")
            throw XCTSkip("switching users needs root")
        }
        if getgrnam(Self.group) == nil {
            let created = try runProcess("/usr/sbin/groupadd", ["--system", Self.group])
            XCTAssertEqual(created.status, 0, created.stderr)
            addTeardownBlock { _ = try? runProcess("/usr/sbin/groupdel", [Self.group]) }
        }
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("acl-\(UUID().uuidString.prefix(8)).toml").path
        try "[control]\ngroup = \"\(Self.group)\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let daemon = try await TestDaemon.start(arguments: ["--config", config])
        defer { daemon.cleanUp() }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: daemon.directory)
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "private"))
        let device = try await daemon.connectDevice()
        try await device.event(["class": .string("CustomEvent"), "seq": .integer(1)])
        try await device.waitForAck(1)

        // Files: the data directory 0700, every SQLite file (-wal and -shm too) 0600.
        let mode = { (path: String) -> Int in
            ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int) ?? -1
        }
        XCTAssertEqual(mode(daemon.dataDirectory), 0o700)
        XCTAssertEqual(mode(daemon.dataDirectory + "/sessions"), 0o700)
        for suffix in ["", "-wal", "-shm"] {
            XCTAssertEqual(mode(session.path + suffix), 0o600, "\(session.path + suffix)")
            XCTAssertEqual(mode(daemon.dataDirectory + "/catalog.sqlite" + suffix), 0o600, "catalog\(suffix)")
        }

        // The socket: 0660, in the control group.
        XCTAssertEqual(mode(daemon.socketPath), 0o660)

        // A member of the group may; anyone else is told which group to join.
        let member = try asNobody(daemon, inGroup: true, ["status", "--json"])
        XCTAssertEqual(member.status, 0, member.stderr)
        XCTAssertTrue(member.stdout.contains("\"private\""), member.stdout)
        let stranger = try asNobody(daemon, inGroup: false, ["status"])
        XCTAssertNotEqual(stranger.status, 0)
        XCTAssertTrue(stranger.stderr.contains("permission denied"), stranger.stderr)
        XCTAssertTrue(stranger.stderr.contains("join the group \"\(Self.group)\""), stranger.stderr)

        // Even with the file opened to everyone, the daemon's own check (SO_PEERCRED) refuses.
        chmod(daemon.socketPath, 0o666)
        let sneaky = try asNobody(daemon, inGroup: false, ["sessions"])
        XCTAssertNotEqual(sneaky.status, 0)
        XCTAssertTrue(sneaky.stderr.contains("nobody may not control muevald; join the group \"\(Self.group)\""), sneaky.stderr)
        XCTAssertTrue(daemon.log.contains("control: refused uid 65534"), daemon.log)
        await device.close()
    }
}
