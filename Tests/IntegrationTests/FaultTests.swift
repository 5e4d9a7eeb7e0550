import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import MuEvalWire
import OrderedCollections
import SessionModel
import WireProtocol
import XCTest

/// The lab machine misbehaves: a full disk, a removed control socket, an unusable data directory.
/// muevald stays up (or stops with a clear message), tells the devices and the developer, and
/// loses nothing it acknowledged.
final class FaultTests: XCTestCase {
    /// An event carrying 32 KiB of unique bytes, so that each one needs new space on disk.
    private static func screenshot(seq: Int) -> OrderedDictionary<String, PlistValue> {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<(32 << 10)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return ["class": .string("UserInterfaceEvent"), "seq": .integer(Int64(seq)), "type": .string("screenshot"),
                "image": .data(bytes), "width": .integer(640), "height": .integer(960)]
    }

    func testAFullDiskRefusesEventsWithAnErrorAndRecoversByItselfWhenSpaceIsFreed() async throws {
        guard getuid() == 0 else {
            print("⚠️  SKIPPING the disk-full test: mounting a small tmpfs needs root")
            throw XCTSkip("mounting a tmpfs needs root")
        }
        let mountPoint = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-full-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try runProcess("/usr/bin/env", ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mountPoint])
        try XCTSkipIf(mount.status != 0, "cannot mount a tmpfs here: \(mount.stderr)")
        defer {
            _ = try? runProcess("/usr/bin/env", ["umount", "-l", mountPoint])
            try? FileManager.default.removeItem(atPath: mountPoint)
        }
        let daemon = try await TestDaemon.start(arguments: ["--data-dir", mountPoint + "/data"])
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "full-disk", device: "ipad"))
        let device = try await daemon.connectDevice()
        try await device.hello(DeviceHello(deviceId: "ipad"))
        for seq in 1...10 { try await device.event(Self.screenshot(seq: seq)) }
        try await device.waitForAck(10)

        // Fill the disk to the last byte.
        let filler = mountPoint + "/filler"
        let fill = try runProcess("/usr/bin/env", ["dd", "if=/dev/zero", "of=\(filler)", "bs=64k"])
        XCTAssertNotEqual(fill.status, 0, "dd stops when the disk is full")

        // Events keep coming; those that cannot be stored are refused with an error naming them.
        var seq = 10
        let refused = try await eventually(timeout: 30, "an error saying the disk is full") { () -> WireReplyError? in
            seq += 1
            try await device.event(Self.screenshot(seq: seq))
            return device.errors.first { $0.reason.contains("disk is full") }
        }
        let refusedSeqs = (refused.fromSeq ?? refused.seq ?? 0)...(refused.seq ?? 0)
        XCTAssertGreaterThan(refusedSeqs.lowerBound, 10, "what was acknowledged before stays stored")
        let status = try await daemon.ctl.call(ControlRequest.Status())
        XCTAssertEqual(status.storageProblem?.diskFull, true)
        XCTAssertGreaterThan(status.counters.eventsFailedStorage, 0)
        let human = try daemon.muevalctl(["status"])
        XCTAssertTrue(human.stdout.contains("storage             FAILING"), human.stdout)
        XCTAssertTrue(daemon.log.contains("storage: cannot commit to session"), daemon.log)

        // Space is freed: the daemon recovers by itself, and the device sends again what was refused
        // or not yet acknowledged (the server de-duplicates by seq).
        try FileManager.default.removeItem(atPath: filler)
        let last = seq
        let resend = (Int(device.acknowledged ?? 0) + 1)...last
        for again in resend { try await device.event(Self.screenshot(seq: again)) }
        try await eventually(timeout: 30, "every seq acknowledged after the refusal") { () -> Bool? in
            let refusedLater = device.errors.filter { ($0.seq ?? 0) > refusedSeqs.upperBound }
            for error in refusedLater {
                // A batch still in flight when space came back may be refused too: send it again.
                for again in Int(error.fromSeq ?? error.seq ?? 0)...Int(error.seq ?? 0) {
                    try await device.event(Self.screenshot(seq: again))
                }
            }
            return (device.acknowledged ?? 0) >= Int64(last) ? true : nil
        }
        let healed = try await daemon.ctl.call(ControlRequest.Status())
        XCTAssertNil(healed.storageProblem)
        XCTAssertTrue(daemon.log.contains("storage: commits succeed again"), daemon.log)

        // Every event exactly once, and the file is sound.
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: "full-disk"))
        let stored = try SessionReader(path: session.path).events().compactMap(\.seq)
        XCTAssertEqual(stored.sorted(), (1...Int64(last)).map { $0 }, "\(last) events, each once")
        let integrity = try runProcess("/usr/bin/sqlite3", [session.path, "PRAGMA integrity_check"])
        XCTAssertEqual(integrity.stdout, "ok\n", integrity.stderr)
        await device.close()
    }

    func testRemovedControlSocketAndUnusableDataDirectoryGiveClearErrors() async throws {
        // A data directory that cannot be created: one line saying which and why, exit status 1, no crash.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-not-a-dir-\(UUID().uuidString.prefix(8))").path
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let refused = try runProcess(TestDaemon.executable("muevald"), ["--data-dir", file + "/data", "--no-zeroconf", "--listen", "127.0.0.1:0"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains(file + "/data"), refused.stderr)
        XCTAssertFalse(refused.stderr.contains("Fatal error"), refused.stderr)

        // The control socket removed under a running daemon: muevalctl says the daemon is not
        // reachable, devices keep recording, and SIGHUP brings the socket back.
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        _ = try await daemon.ctl.call(ControlRequest.StartSession(name: "orphan"))
        try FileManager.default.removeItem(atPath: daemon.socketPath)
        let lost = try daemon.muevalctl(["status"])
        XCTAssertNotEqual(lost.status, 0)
        XCTAssertTrue(lost.stderr.contains("no control socket at \(daemon.socketPath)"), lost.stderr)
        let device = try await daemon.connectDevice()
        try await device.event(["class": .string("CustomEvent"), "seq": .integer(1)])
        try await device.waitForAck(1)

        kill(daemon.process.processIdentifier, SIGHUP)
        let back = try await eventually("the control socket to come back") { () -> StatusReport? in
            try? await daemon.ctl.call(ControlRequest.Status())
        }
        XCTAssertEqual(back.sessions.first?.events, 1)
        XCTAssertTrue(daemon.log.contains("recreated the control socket"), daemon.log)
        await device.close()
        // Both listeners, the replaced one and its successor, let shutdown through.
        let exitStatus = try await daemon.stop()
        XCTAssertEqual(exitStatus, 0, daemon.log)
    }
}
