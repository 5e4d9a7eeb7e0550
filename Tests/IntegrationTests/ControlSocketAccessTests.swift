import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import SessionModel
import XCTest

/// The control socket's holes, closed: a member of the control group gets in where /proc is hidden (the
/// unit's `ProtectProc=invisible`), muevald reads only the files its client opened and passed, no error
/// quotes a file, what muevalctl writes is private, and a password file others may read stops muevald.
final class ControlSocketAccessTests: XCTestCase {
    private static let group = "muevalaccess"

    private func requireRoot() throws {
        guard getuid() == 0 else {
            print("⚠️  SKIPPING \(name): switching users needs root")
            throw XCTSkip("switching users needs root")
        }
    }

    private func makeGroup() throws {
        guard getgrnam(Self.group) == nil else { return }
        let created = try runProcess("/usr/sbin/groupadd", ["--system", Self.group])
        XCTAssertEqual(created.status, 0, created.stderr)
        addTeardownBlock { _ = try? runProcess("/usr/sbin/groupdel", [Self.group]) }
    }

    /// muevald as the unit runs it, as far as seeing other users goes: /proc mounted `hidepid=invisible`
    /// (what `ProtectProc=invisible` mounts), and no capability that sees through it (CAP_SYS_PTRACE,
    /// root's group) or reads other users' files (CAP_DAC_*).
    private static let sandbox = [
        "/usr/bin/unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
        "mount -t proc -o hidepid=invisible proc /proc && exec /usr/bin/setpriv --regid=64000 --clear-groups "
            + "--bounding-set=-sys_ptrace,-dac_override,-dac_read_search \"$@\"",
        "sandbox",
    ]

    /// Runs `executable ARGUMENTS` as the user nobody, in the control group or not.
    private func asNobody(inGroup: Bool, _ executable: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let identity = ["--reuid=65534", "--regid=65534"] + (inGroup ? ["--groups=\(Self.group)"] : ["--clear-groups"])
        return try runProcess("/usr/bin/setpriv", identity + [executable] + arguments)
    }

    /// A copy of muevalctl that nobody may run, outside directories it may not enter.
    private func muevalctl(for daemon: TestDaemon) throws -> String {
        let tool = daemon.directory + "/muevalctl"
        if !FileManager.default.fileExists(atPath: tool) {
            try FileManager.default.copyItem(atPath: TestDaemon.executable("muevalctl"), toPath: tool)
        }
        return tool
    }

    func testAGroupMemberIsServedWhereProcIsHiddenAndImportsOnlyWhatItMayRead() async throws {
        try requireRoot()
        try makeGroup()
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("access-\(UUID().uuidString.prefix(8)).toml").path
        try "[control]\ngroup = \"\(Self.group)\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let daemon = try await TestDaemon.start(arguments: ["--config", config], launcher: Self.sandbox)
        defer { daemon.cleanUp() }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: daemon.directory)
        let tool = try muevalctl(for: daemon)
        let socket = ["--socket", daemon.socketPath]

        // README's deploy step: `usermod -aG mueval alice`, then alice runs muevalctl. Her group is a
        // supplementary one, which /proc/PID/status no longer shows muevald.
        let member = try asNobody(inGroup: true, tool, ["status", "--json"] + socket)
        XCTAssertEqual(member.status, 0, member.stderr + "\n" + daemon.log)
        let stranger = try asNobody(inGroup: false, tool, ["status"] + socket)
        XCTAssertNotEqual(stranger.status, 0)
        XCTAssertTrue(stranger.stderr.contains("permission denied"), stranger.stderr)

        // The member's own file, which muevald's user cannot open: imported, as muevalctl passes it open.
        let own = daemon.directory + "/nobody"
        try FileManager.default.createDirectory(atPath: own, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let track = own + "/walk.gpx"
        try """
            <gpx version="1.1"><trk><name>walk</name><trkseg>
            <trkpt lat="48.1" lon="11.5"><time>2014-07-05T12:03:20Z</time></trkpt>
            </trkseg></trk></gpx>
            """.write(toFile: track, atomically: true, encoding: .utf8)
        XCTAssertEqual(chown(own, 65534, 65534), 0)
        XCTAssertEqual(chown(track, 65534, 65534), 0)
        XCTAssertEqual(chmod(track, 0o600), 0)
        let imported = try asNobody(inGroup: true, tool, ["import", track, "--json"] + socket)
        XCTAssertEqual(imported.status, 0, imported.stderr + "\n" + daemon.log)
        XCTAssertTrue(imported.stdout.contains("\"walk.gpx\""), imported.stdout)

        // A file only muevald's user may read, such as its database password: the member cannot open it,
        // and a path sent over the socket by hand is not opened (it was, and its first bytes came back).
        let secret = daemon.directory + "/postgres-password"
        try "hunter2-secret\n".write(toFile: secret, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(secret, 0o600), 0)
        let denied = try asNobody(inGroup: true, tool, ["import", secret] + socket)
        XCTAssertEqual(denied.status, 1)
        XCTAssertTrue(denied.stderr.contains("\(secret): cannot be read (permission denied)"), denied.stderr)
        let script = "import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
            + "s.sendall(sys.argv[2].encode() + b'\\n'); print(s.makefile().readline())"
        let request = #"{"command":"import","files":["\#(secret)"]}"#
        let raw = try asNobody(inGroup: true, "/usr/bin/python3", ["-c", script, daemon.socketPath, request])
        XCTAssertEqual(raw.status, 0, raw.stderr)
        XCTAssertTrue(raw.stdout.contains(#""ok":false"#) && raw.stdout.contains("muevald opens no file for its clients"), raw.stdout)
        XCTAssertFalse(raw.stdout.contains("hunter2") || imported.stdout.contains("hunter2") || denied.stderr.contains("hunter2"))
        let sessions = try await daemon.ctl.call(ControlRequest.ListSessions())
        XCTAssertEqual(sessions.map(\.name), ["walk"])
    }

    /// `report`, `export -o` and `media` under a shell's usual umask 022: files 0600, folders 0700.
    func testWhatMuevalctlWritesIsItsOwnersAloneWhateverTheUmask() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        _ = try await daemon.ctl.call(ControlRequest.StartSession(name: "private"))
        let device = try await daemon.connectDevice()
        try await device.event(["class": .string("CustomEvent"), "seq": .integer(1)])
        try await device.waitForAck(1)
        await device.close()
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: "private"))

        let out = daemon.directory + "/out"
        let commands = [
            ["export", "private", "--format", "jsonl", "-o", out + "/private.jsonl"],
            ["report", "private", "--out", out + "/report"],
            ["media", "private", "--out", out + "/media"],
        ]
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        for command in commands {
            let run = try runProcess("/bin/sh", ["-c", "umask 022 && exec \"$0\" \"$@\"", TestDaemon.executable("muevalctl")]
                                     + command + ["--socket", daemon.socketPath])
            XCTAssertEqual(run.status, 0, "\(command): \(run.stderr)")
        }
        let mode = { (path: String) -> Int in
            ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int) ?? -1
        }
        XCTAssertEqual(mode(out + "/private.jsonl"), 0o600)
        for folder in ["/report", "/report/shots", "/media"] { XCTAssertEqual(mode(out + folder), 0o700, folder) }
        for file in ["/report/index.html", "/report/report.css", "/report/report.js"] { XCTAssertEqual(mode(out + file), 0o600, file) }
    }

    /// PostgreSQL's rule for its own secrets: a password file others may read is refused, saying what to change.
    func testAPasswordFileOthersMayReadStopsMuevaldAtStart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("secret-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let password = directory + "/postgres-password"
        try "hunter2\n".write(toFile: password, atomically: true, encoding: .utf8)
        let config = directory + "/muevald.toml"
        // An address nothing listens on: replication retries there while muevald records.
        try "[storage.postgres]\nurl = \"postgres://mueval@127.0.0.1:1/mueval\"\npassword_file = \"\(password)\"\n"
            .write(toFile: config, atomically: true, encoding: .utf8)

        XCTAssertEqual(chmod(password, 0o644), 0)
        do {
            let daemon = try await TestDaemon.start(arguments: ["--config", config])
            daemon.cleanUp()
            XCTFail("muevald started with a password file everyone may read")
        } catch let TestDaemonError.exited(status, log) {
            XCTAssertNotEqual(status, 0)
            XCTAssertTrue(log.contains("storage.postgres.password_file \(password) may be read or changed by anyone (mode 0644): chmod 600 it"), log)
            XCTAssertFalse(log.contains("hunter2"), log)
        }

        XCTAssertEqual(chmod(password, 0o600), 0)
        let daemon = try await TestDaemon.start(arguments: ["--config", config])
        defer { daemon.cleanUp() }
        let status = try await daemon.ctl.call(ControlRequest.Status())
        XCTAssertNotNil(status.replication, "replicating (or retrying) with the password it may use")
    }
}
