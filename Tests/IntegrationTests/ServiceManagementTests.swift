import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// muevald as a lab runs it: under systemd (Type=notify), configured by a file, reloaded with
/// SIGHUP, installed with `make install`.
final class ServiceManagementTests: XCTestCase {
    private func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-svc-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    private func writeConfig(_ text: String, in directory: String) throws -> String {
        let path = directory + "/muevald.toml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testNotifiesReadyStatusWatchdogAndStopping() async throws {
        let notify = try NotifySocket(directory: try temporaryDirectory())
        let daemon = try await TestDaemon.start(launcher: ["env", "NOTIFY_SOCKET=\(notify.path)", "WATCHDOG_USEC=200000"])
        defer { daemon.cleanUp() }
        let ready = try await eventually("READY=1") { notify.assignments.contains("READY=1") ? true : nil }
        XCTAssertTrue(ready)
        // By READY=1 devices can connect: the port accepts.
        let device = try await daemon.connectDevice()
        await device.close()
        XCTAssertTrue(notify.assignments.contains { $0.hasPrefix("STATUS=0 sessions open") }, "\(notify.assignments)")

        _ = try await daemon.ctl.call(ControlRequest.StartSession(name: "notified"))
        try await eventually("STATUS with the new session") { () -> Bool? in
            notify.assignments.contains { $0.hasPrefix("STATUS=1 sessions open") } ? true : nil
        }
        // WatchdogSec=0.2 s: a ping every 0.1 s while the event loops turn.
        try await eventually("watchdog pings") { notify.assignments.filter { $0 == "WATCHDOG=1" }.count >= 3 ? true : nil }

        let status = try await daemon.stop()
        XCTAssertEqual(status, 0)
        let said = notify.assignments
        XCTAssertTrue(said.contains("STOPPING=1"), "\(said)")
        XCTAssertLessThan(said.firstIndex(of: "READY=1") ?? .max, said.firstIndex(of: "STOPPING=1") ?? .min)
    }

    func testBadConfigurationsStopWithExit78AndSayWhatIsWrong() throws {
        let directory = try temporaryDirectory()
        let muevald = TestDaemon.executable("muevald")
        let cases: [(config: String, expected: String)] = [
            ("[server]\nlisten = \"0.0.0.0:28021\"\nmax_conections = 5\n", "unknown setting server.max_conections"),
            ("[limits]\nmax_message_bytes = \"big\"\n", "limits.max_message_bytes must be an integer"),
            ("[server]\nunknown_device_policy = \"maybe\"\n", "expected one of \"reject\", \"auto\""),
            ("[log]\nlevel = \"info\"\n[zeroconf\n", "muevald.toml:3"),
            ("[server]\nlisten = \"localhost:99999\"\n", "port 0-65535"),
        ]
        for (config, expected) in cases {
            let path = try writeConfig(config, in: directory)
            let result = try runProcess(muevald, ["--config", path, "--check-config"])
            XCTAssertEqual(result.status, 78, "\(config) → \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(expected), "\(config) → \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(path), "the message names the file: \(result.stderr)")
        }

        // A valid file: the effective configuration, precedence applied, readable back as a config file.
        let path = try writeConfig("[server]\nlisten = \"0.0.0.0:3000\"\nmax_connections = 7\n[log]\nlevel = \"debug\"\n", in: directory)
        let checked = try runProcess("/usr/bin/env", ["MUEVAL_SERVER_MAX_CONNECTIONS=8", muevald, "--config", path, "--check-config", "--log-level", "error"])
        XCTAssertEqual(checked.status, 0, checked.stderr)
        XCTAssertTrue(checked.stdout.contains("listen = \"0.0.0.0:3000\""), checked.stdout)
        XCTAssertTrue(checked.stdout.contains("max_connections = 8"), "environment beats file: \(checked.stdout)")
        XCTAssertTrue(checked.stdout.contains("level = \"error\""), "flag beats file: \(checked.stdout)")
        let roundTrip = try writeConfig(checked.stdout, in: directory)
        let again = try runProcess(muevald, ["--config", roundTrip, "--check-config"])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(again.stdout, checked.stdout)
    }

    func testSighupAppliesWhatItCanAndSaysWhatNeedsARestart() async throws {
        let directory = try temporaryDirectory()
        let config = try writeConfig("[log]\nlevel = \"info\"\n[limits]\nmax_message_bytes = 1048576\n", in: directory)
        let daemon = try await TestDaemon.start(arguments: ["--config", config])
        defer { daemon.cleanUp() }
        _ = try await daemon.ctl.call(ControlRequest.StartSession(name: "reloaded"))

        _ = try writeConfig("""
            [log]
            level = "debug"
            [limits]
            max_message_bytes = 400
            [storage]
            synchronous = "normal"
            """, in: directory)
        kill(daemon.process.processIdentifier, SIGHUP)
        // Two log lines, written one after the other: wait for both, not for the first and then hope.
        try await eventually("the reload to be reported; log:\n\(daemon.log)") { () -> Bool? in
            daemon.log.contains("reload: applied limits.max_message_bytes, log.level")
                && daemon.log.contains("need a restart (systemctl restart muevald): storage.synchronous") ? true : nil
        }

        // The new limit holds for new connections: 400 bytes is too little for this event.
        let device = try await daemon.connectDevice()
        try await device.send("<event><key>class</key><string>CustomEvent</string><key>note</key><string>\(String(repeating: "x", count: 600))</string></event>")
        let errors = try await device.waitFor("an error for the large message") { _ in device.errors.isEmpty ? nil : device.errors }
        XCTAssertTrue(errors[0].reason.contains("400"), errors[0].reason)
        await device.close()
        // Debug lines appear now that the level is debug.
        try await eventually("debug logging") { daemon.log.contains(" DEBUG ") ? true : nil }

        // A broken file on reload: an error, and the daemon keeps its configuration and runs on.
        _ = try writeConfig("[limits]\nmax_message_bytes = -1\n", in: directory)
        kill(daemon.process.processIdentifier, SIGHUP)
        try await eventually("the refusal") { daemon.log.contains("the running configuration stays") ? true : nil }
        let status = try await daemon.ctl.call(ControlRequest.Status())
        XCTAssertEqual(status.sessions.count, 1)
    }

    func testMakeInstallIntoADestdirGivesAVerifiedUnitAndUninstallRemovesIt() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let root = try temporaryDirectory()
        let bin = URL(fileURLWithPath: TestDaemon.executable("muevald")).deletingLastPathComponent().path
        let install = try runProcess("/usr/bin/make", ["-s", "-C", repository, "install", "DESTDIR=\(root)", "BIN=\(bin)"], timeout: 120)
        XCTAssertEqual(install.status, 0, install.stdout + install.stderr)

        let expected = [
            "/usr/local/bin/muevald", "/usr/local/bin/muevalctl",
            "/etc/systemd/system/muevald.service", "/usr/local/lib/sysusers.d/mueval.conf",
            "/etc/mueval/muevald.toml",
            "/usr/local/share/bash-completion/completions/muevalctl",
            "/usr/local/share/zsh/site-functions/_muevalctl",
            "/usr/local/share/fish/vendor_completions.d/muevalctl.fish",
            "/usr/local/share/doc/mueval/README.md",
        ]
        for path in expected {
            XCTAssertTrue(FileManager.default.fileExists(atPath: root + path), "\(path) not installed")
        }
        let bash = try String(contentsOfFile: root + "/usr/local/share/bash-completion/completions/muevalctl", encoding: .utf8)
        XCTAssertTrue(bash.contains("tail"), "the completion knows the commands")
        let unit = try String(contentsOfFile: root + "/etc/systemd/system/muevald.service", encoding: .utf8)
        XCTAssertTrue(unit.contains("ExecStart=/usr/local/bin/muevald"), unit)

        // systemd-analyze verify on the installed unit, against the system's own units and tools
        // (the unit's ExecReload= runs /bin/kill, copied in: links would resolve inside the root).
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") {
            try FileManager.default.createDirectory(atPath: root + "/usr/lib/systemd", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: root + "/usr/lib/systemd/system", withDestinationPath: "/lib/systemd/system")
            try FileManager.default.createDirectory(atPath: root + "/bin", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: "/bin/kill", toPath: root + "/bin/kill")
            let verify = try runProcess("/usr/bin/systemd-analyze", ["verify", "--root=\(root)", "/etc/systemd/system/muevald.service"])
            XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
            XCTAssertEqual(verify.stderr, "", "systemd-analyze has remarks")
        } else {
            print("⚠️  systemd-analyze is missing: the unit is not verified (make test installs systemd)")
        }

        // An edited config survives a second install.
        try "# edited by the lab\n".write(toFile: root + "/etc/mueval/muevald.toml", atomically: true, encoding: .utf8)
        let again = try runProcess("/usr/bin/make", ["-s", "-C", repository, "install", "DESTDIR=\(root)", "BIN=\(bin)"], timeout: 120)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(try String(contentsOfFile: root + "/etc/mueval/muevald.toml", encoding: .utf8), "# edited by the lab\n")

        let uninstall = try runProcess("/usr/bin/make", ["-s", "-C", repository, "uninstall", "DESTDIR=\(root)"], timeout: 60)
        XCTAssertEqual(uninstall.status, 0, uninstall.stderr)
        for path in expected where path != "/etc/mueval/muevald.toml" {
            XCTAssertFalse(FileManager.default.fileExists(atPath: root + path), "\(path) left behind")
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: root + "/etc/mueval/muevald.toml"), "the lab's configuration is kept")
    }
}
