@testable import MuEvalCapture
import MuEvalWire
import NIOConcurrencyHelpers
import Testing
import WireProtocol

/// The task API against the fake server on loopback: the invitation in `<hello>`, the study's tasks from
/// `<welcome>` (again after a reconnect only when they changed), the tester's marks on the wire, and a mark
/// for a task the study does not have refused.
@Suite struct StudyTasksTests {
    typealias FakeServer = CaptureManagerTests.FakeServer

    static let write = WelcomeTask(name: "Write a note", instructions: "Write a note about today.", timeLimit: 120, order: 1)
    static let find = WelcomeTask(name: "Find a note", order: 2)
    static let share = WelcomeTask(name: "Share a note", instructions: "Send it to a friend.", order: 3)

    /// The fields of the custom events the server stored, in order.
    static func customEvents(_ server: FakeServer) throws -> [[String: String]] {
        try server.state.events.withLockedValue { $0 }.filter { $0.eventClass == "CustomEvent" }.map { event in
            guard case .dict(let fields) = try TypedJSON.decode(event.payload, blob: { _ in [] }) else { return [:] }
            return fields.reduce(into: [:]) { strings, field in
                if case .string(let text) = field.value { strings[field.key] = text }
            }
        }
    }

    @Test func theInvitationGoesInTheHelloAndTheTasksComeInTheServersOrder() async throws {
        let server = try await FakeServer()
        // Sent out of order: the library orders them by `order`.
        server.state.studies.withLockedValue { $0 = [StudyTasks(tasks: [Self.find, Self.write], questionnaire: "https://lab.example/i/abcdefghjk")] }
        var configuration = CaptureManagerTests.configuration(server)
        configuration.invitation = "abcdefghjk"
        let capture = CaptureManager()
        try capture.startCapture(configuration)
        var tasks = capture.studyTasks.makeAsyncIterator()
        let study = try #require(await tasks.next())
        #expect(study.tasks == [Self.write, Self.find])
        #expect(study.questionnaire == "https://lab.example/i/abcdefghjk")
        #expect(study.task(named: "Write a note")?.timeLimit == 120)
        #expect(capture.currentStudyTasks == study)
        #expect(server.state.hellos.withLockedValue { $0.map(\.invitation) } == ["abcdefghjk"])
        await capture.stopCapture(timeout: 5)
        await server.close()
    }

    @Test func theTestersMarksAreCustomEventsByTheTesterAndAnUnknownTaskIsRefused() async throws {
        let server = try await FakeServer()
        server.state.studies.withLockedValue { $0 = [StudyTasks(tasks: [Self.write, Self.find])] }
        // A session that records every class.
        server.welcomes.withLockedValue { $0 = [[]] }
        let capture = CaptureManager()
        try capture.startCapture(CaptureManagerTests.configuration(server))
        var tasks = capture.studyTasks.makeAsyncIterator()
        _ = await tasks.next()
        try capture.beginTask("Write a note")
        try capture.endTask("Write a note")
        try capture.beginTask("Find a note")
        let refused = #expect(throws: CaptureError.self) { try capture.endTask("Publish a post") }
        #expect(refused?.description == #"the study has no task "Publish a post"; its tasks: "Write a note", "Find a note""#)
        try capture.giveUpTask("Find a note")
        let summary = try #require(await capture.stopCapture(timeout: 30))
        #expect(summary.unacknowledged == 0 && summary.statistics.recorded == 4, "the refused mark is not recorded")
        let marks = try Self.customEvents(server)
        #expect(marks.map { [$0["name"] ?? "", $0["marker"] ?? "", $0["by"] ?? ""] } == [
            ["Write a note", "begin", "tester"], ["Write a note", "end", "tester"],
            ["Find a note", "begin", "tester"], ["Find a note", "giveUp", "tester"],
        ])
        await server.close()
    }

    /// Before the welcome, and in a session whose welcome has no tasks, there is nothing to check a name against.
    @Test func withoutTheStudysTasksEveryMarkIsRecorded() async throws {
        let server = try await FakeServer()
        let capture = CaptureManager()
        try capture.startCapture(CaptureManagerTests.configuration(server))
        var tasks = capture.studyTasks.makeAsyncIterator()
        #expect(await tasks.next() == StudyTasks(tasks: []))
        try capture.beginTask("Anything")
        try capture.giveUpTask("Anything")
        #expect(try #require(await capture.stopCapture(timeout: 30)).statistics.recorded == 2)
        await server.close()
    }

    /// The same tasks in the welcome after a reconnect are not delivered again; changed ones are.
    @Test func tasksAreDeliveredAgainAfterAReconnectOnlyWhenTheyChanged() async throws {
        let server = try await FakeServer()
        let first = StudyTasks(tasks: [Self.write, Self.find]), changed = StudyTasks(tasks: [Self.write, Self.find, Self.share])
        server.state.studies.withLockedValue { $0 = [first, first, changed] }
        server.state.dropsAfterWelcome.withLockedValue { $0 = 2 }
        var configuration = CaptureManagerTests.configuration(server)
        configuration.limits.reconnectDelays = 0.01...0.05
        let capture = CaptureManager()
        try capture.startCapture(configuration)
        var tasks = capture.studyTasks.makeAsyncIterator()
        #expect(await tasks.next() == first)
        #expect(await tasks.next() == changed)
        #expect(server.connections.withLockedValue { $0 } == 3, "the second welcome (the same tasks) came in between")
        #expect(capture.currentStudyTasks == changed)
        try capture.beginTask("Share a note")
        await capture.stopCapture(timeout: 5)
        await server.close()
    }
}
