import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import MuEvalWire
import SessionModel
import XCTest

/// Phones joining a study by their invitation against the real muevald (issue 32, docs/PROTOCOL.md
/// "Invitations"): the welcome brings the study's tasks and the questionnaire's page; a wrong code is
/// refused and held back like a wrong pairing code; a second phone with the same code is refused; the
/// invitation is `done` when its session stops, by the phone's goodbye or the developer's stop.
final class InvitationPairingTests: XCTestCase {
    static let codeA = "2345abcdef"
    static let codeB = "fedcba5432"

    /// A connection from `source` presenting `hello`; returns it once the daemon answered.
    private func join(_ daemon: TestDaemon, from source: String = "127.0.0.1", _ hello: DeviceHello) async throws -> TestDevice {
        let device = try await daemon.connectDevice(from: source)
        try await device.hello(hello)
        try await device.waitFor("a reply to the hello") { replies in replies.first }
        return device
    }

    private func reason(_ device: TestDevice) -> String? {
        device.errors.first?.reason
    }

    private func event(_ seq: Int64) -> [UInt8] {
        WireEncoder.event(["class": .string("UserInputEvent"), "seq": .integer(seq), "x": .integer(1), "y": .integer(2)])
    }

    func testAPhoneJoinsByItsInvitationGetsItsTasksAndTheInvitationIsDoneWhenItsSessionStops() async throws {
        // The first wait after 3 wrong codes is a minute, longer than the test: the 4th attempt is held back.
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("invite-\(UUID().uuidString.prefix(8)).toml").path
        try "[server]\npairing_backoff_seconds = 60\n".write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let daemon = try await TestDaemon.start(arguments: ["--config", config])
        defer { daemon.cleanUp() }

        _ = try daemon.ok(["study", "create", "remote"])
        _ = try daemon.ok(["study", "iteration", "add", "remote"])
        _ = try daemon.ok(["study", "task", "add", "remote", "Add a note", "--instructions", "Write down <milk> & save it", "--time-limit", "120"])
        _ = try daemon.ok(["study", "task", "add", "remote", "Find the note"])
        let now = Date().timeIntervalSince1970
        let catalog = try Catalog(directory: daemon.dataDirectory)
        try catalog.createInvitations(
            [Invitation(code: Self.codeA, study: "remote", iteration: 1, participant: "TAAAAA", created: now, expires: now + 3600),
             Invitation(code: Self.codeB, study: "remote", iteration: 1, participant: "TBBBBB", created: now, expires: now + 3600)],
            participants: [Participant(code: "TAAAAA", created: now), Participant(code: "TBBBBB", created: now)],
            recruitment: Recruitment(study: "remote", iteration: 1, target: 2, created: now, seed: 1))
        let console = try await daemon.consoleLink().url.components(separatedBy: "/login").first ?? ""
        let tasks = [WelcomeTask(name: "Add a note", instructions: "Write down <milk> & save it", timeLimit: 120, order: 1),
                     WelcomeTask(name: "Find the note", order: 2)]

        // A guesser from another address: three wrong codes compared, then held back, even with the right one.
        var guesses: [String] = []
        for code in ["2345abcdeg", "2345abcdeh", "not a code", Self.codeA] {
            let guesser = try await join(daemon, from: "127.0.0.2", DeviceHello(deviceId: "guesser", invitation: code))
            guesses.append(reason(guesser) ?? "welcomed")
            await guesser.close()
        }
        XCTAssertEqual(guesses.prefix(3).filter { $0.hasPrefix("unknown or expired invitation") }.count, 3, "\(guesses)")
        XCTAssertTrue(guesses[3].hasPrefix("too many wrong invitation codes from 127.0.0.2: try again in "), guesses[3])

        // The tester's phone: its session opens with the study's tasks and the questionnaire's page.
        let phone = try await join(daemon, DeviceHello(deviceId: "phone-a", device: DeviceDescription(model: "iPhone4,1"), invitation: Self.codeA))
        let welcome = try XCTUnwrap(phone.welcome, "\(phone.replies)")
        XCTAssertEqual(welcome.tasks, tasks)
        XCTAssertEqual(welcome.questionnaire, console + "/i/" + Self.codeA)
        try await phone.send(event(1))
        try await phone.waitForAck(1)
        let sessionA = try XCTUnwrap(Int64(welcome.sessionId))
        let invited = try await eventually(timeout: 20, "invitation A recording (log: \(daemon.log))") {
            try catalog.invitation(code: Self.codeA).flatMap { $0.status == .recording ? $0 : nil }
        }
        XCTAssertEqual(invited.sessionId, sessionA)
        XCTAssertEqual(invited.deviceId, "phone-a")
        let record = try await daemon.ctl.call(ControlRequest.ListSessions()).first { $0.id == sessionA }
        XCTAssertEqual(record?.name, "remote-TAAAAA")
        XCTAssertEqual(record?.study, "remote")
        XCTAssertEqual(record?.participant, "TAAAAA")
        XCTAssertEqual(record?.boundDevice, "phone-a")

        // Another phone with the same code is refused; the tester's phone comes back to its session.
        let other = try await join(daemon, from: "127.0.0.3", DeviceHello(deviceId: "phone-x", invitation: Self.codeA))
        XCTAssertEqual(reason(other), "this invitation is in use by another phone")
        await other.close()
        await phone.close()
        let back = try await join(daemon, DeviceHello(deviceId: "phone-a", invitation: Self.codeA))
        XCTAssertEqual(back.welcome?.sessionId, welcome.sessionId, "\(back.replies)")
        XCTAssertEqual(back.welcome?.tasks, tasks)

        // Its goodbye ends the unmoderated session; the invitation is done, and cannot be used again.
        try await back.goodbye()
        await back.close()
        let done = try await eventually(timeout: 20, "invitation A done (log: \(daemon.log))") {
            try catalog.invitation(code: Self.codeA).flatMap { $0.status == .done ? $0 : nil }
        }
        XCTAssertEqual(done.sessionId, sessionA)
        // `done` is stored as the stop begins; the session is `stopped` once its journal is closed: waited for too.
        _ = try await eventually(timeout: 20, "session A stopped (log: \(daemon.log))") {
            try await daemon.ctl.call(ControlRequest.ListSessions()).first { $0.id == sessionA && $0.state == .stopped }
        }
        let late = try await join(daemon, DeviceHello(deviceId: "phone-a", invitation: Self.codeA))
        XCTAssertEqual(reason(late), "this invitation was used: its session has ended; ask the study's organiser for a new one")
        await late.close()

        // The second tester's session ends by the developer's stop: its invitation is done too.
        let phoneB = try await join(daemon, from: "127.0.0.4", DeviceHello(deviceId: "phone-b", invitation: Self.codeB))
        let sessionB = try XCTUnwrap(phoneB.welcome?.sessionId, "\(phoneB.replies)")
        // `recording` reaches the catalog on its queue after the welcome went out: waited for, not raced.
        _ = try await eventually(timeout: 20, "invitation B recording (log: \(daemon.log))") {
            try catalog.invitation(code: Self.codeB).flatMap { $0.status == .recording ? $0 : nil }
        }
        _ = try daemon.ok(["stop", sessionB])
        XCTAssertEqual(try catalog.invitation(code: Self.codeB)?.status, .done, "done once the stop returns")
        await phoneB.close()

        // A study session the developer starts also tells its device the tasks, with no questionnaire.
        _ = try daemon.ok(["study", "participant", "add", "remote", "P01"])
        let started = try daemon.ok(["start", "--study", "remote", "--iteration", "1", "--participant", "P01"]).trimmingCharacters(in: .newlines)
        let lab = try await join(daemon, DeviceHello(deviceId: "lab-phone"))
        XCTAssertEqual(lab.welcome?.sessionId, started, "\(lab.replies)")
        XCTAssertEqual(lab.welcome?.tasks, tasks)
        XCTAssertNil(lab.welcome?.questionnaire)
        await lab.close()
    }
}
