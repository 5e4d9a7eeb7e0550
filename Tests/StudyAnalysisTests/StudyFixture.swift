import Foundation
import MuEvalWire
import SessionAnalysis
import SessionAnalysisTestSupport
import SessionModel
import WireProtocol

/// Time 0 of the synthetic study sessions.
let t0 = 1_300_000_000.0

/// A study of two iterations with known answers: four tasks (one named with a comma), two participants in
/// iteration 1 (P1 with two sessions), two in iteration 2. Every number the tests check is worked out by
/// hand in the comments of `write`.
struct StudyFixture {
    static let publish = "Publish, post"
    static let settings = "Find settings"
    static let rate = "Rate app"
    static let invite = "Invite"
    static let leaf = JournalBuilder.element("UIImageView", id: "leaf", frame: [90, 90, 30, 30], title: "leaf")
    static let button = JournalBuilder.element("UIButton", id: "send", frame: [180, 180, 60, 44], title: "Send")

    let directory: String
    let study: Study

    init() throws {
        directory = NSTemporaryDirectory() + "mueval-study-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        study = Study(
            name: "momentree", appId: "org.example.app", created: 0,
            iterations: [StudyIteration(number: 1, label: "alpha", created: 0), StudyIteration(number: 2, label: "beta", created: 0)],
            tasks: [
                StudyTask(name: Self.publish, timeLimit: 60, success: .event("PostPublished"),
                          expectedPath: ["FeedView", "ComposeView", "FeedView"]),
                StudyTask(name: Self.settings, success: .view("SettingsView")),
                StudyTask(name: Self.rate, success: .observer),
                StudyTask(name: Self.invite, timeLimit: 10, success: .event("Invited")),
            ],
            participants: [
                Participant(code: "P1", attributes: ["experience": "novice", "age": "30s"], created: 0),
                Participant(code: "P2", attributes: ["experience": "expert"], created: 0),
                Participant(code: "P3", created: 0), Participant(code: "P4", created: 0),
            ])
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    static func mark(_ mark: TaskMark, _ task: String, _ outcome: TaskOutcome? = nil) throws -> ObserverNote {
        try ObserverNote(mark, task: task, outcome: outcome, source: .console)
    }

    static func image(_ tag: String) -> [UInt8] { Array("PNG \(tag)".utf8) }

    /// A tap that the app answers after 1.5 s: unresponsive (over the 1 s window), not a freeze (under 2 s).
    static func lateTap(_ journal: JournalBuilder, at time: Double, x: Double, y: Double, target: PlistValue?) {
        journal.tap(at: time, x: x, y: y, view: "ComposeView", target: target)
        journal.action(at: time + 1.5, view: "ComposeView")
    }

    /// One session file of the study; `placed` false leaves its record without study fields, so that only
    /// the file's study context says where it belongs.
    func session(id: Int64, iteration: Int, participant: String, placed: Bool = true,
                 _ build: (JournalBuilder) throws -> Void) async throws -> SessionRecord {
        let context = StudyContext(study: study, iteration: study.iteration(iteration)!, participant: study.participant(participant)!)
        let path = directory + "/s\(id).sqlite"
        let builder = try JournalBuilder(path: path, name: "session \(id)", studyContext: context)
        try build(builder)
        try await builder.finish()
        return SessionRecord(id: id, uuid: "uuid-\(id)", name: "session \(id)", created: 0, path: path,
                             assignment: placed ? context.assignment : nil)
    }

    func write() async throws -> StudyData {
        let p1 = try await session(id: 1, iteration: 1, participant: "P1") { journal in
            journal.viewDidAppear(at: t0, view: "FeedView", transition: "launch", stack: ["FeedView"], screenshot: Self.image("feed"))
            // Publish: the observer's begin (8) is earlier than the app's (10), so the run is 8…42 (the observer's end): 34 s.
            journal.note(try Self.mark(.begin, Self.publish), at: t0 + 8)
            journal.marker(at: t0 + 10, "begin", task: Self.publish)
            journal.viewDidAppear(at: t0 + 12, view: "ComposeView", transition: "push", stack: ["FeedView", "ComposeView"],
                                  screenshot: Self.image("compose"))
            Self.lateTap(journal, at: t0 + 14, x: 5, y: 5, target: nil)          // misclick and unresponsive
            Self.lateTap(journal, at: t0 + 20, x: 100, y: 100, target: Self.leaf) // unresponsive, not a misclick
            journal.note(try ObserverNote(text: "looks for the button", kind: "problem", source: .console), at: t0 + 22)
            journal.tap(at: t0 + 25, x: 200, y: 200, view: "ComposeView", target: Self.button)
            journal.action(at: t0 + 25.2, view: "ComposeView")                   // answered at once
            journal.viewDidAppear(at: t0 + 30, view: "SettingsView", transition: "push", stack: ["FeedView", "ComposeView", "SettingsView"])
            journal.viewDidAppear(at: t0 + 32, view: "ComposeView", transition: "pop", stack: ["FeedView", "ComposeView"])
            journal.custom(at: t0 + 35, name: "PostPublished")
            journal.viewDidAppear(at: t0 + 36, view: "FeedView", transition: "pop", stack: ["FeedView"])
            journal.marker(at: t0 + 40, "end", task: Self.publish)
            journal.note(try Self.mark(.end, Self.publish), at: t0 + 42)
            // Find settings: success by view, then a second run.
            journal.marker(at: t0 + 50, "begin", task: Self.settings)
            journal.viewDidAppear(at: t0 + 55, view: "SettingsView", transition: "push", stack: ["FeedView", "SettingsView"])
            journal.marker(at: t0 + 58, "end", task: Self.settings)
            journal.marker(at: t0 + 70, "begin", task: Self.settings)
            journal.marker(at: t0 + 75, "end", task: Self.settings)
            // Rate app: observer marks only, no verdict.
            journal.note(try Self.mark(.begin, Self.rate), at: t0 + 80)
            journal.note(try Self.mark(.end, Self.rate), at: t0 + 90)
            journal.note(try ObserverNote(text: "between tasks", source: .console), at: t0 + 95)
            // Invite: the event comes, but 15 s is over the 10 s limit; the observer says assisted.
            journal.marker(at: t0 + 100, "begin", task: Self.invite)
            journal.custom(at: t0 + 105, name: "Invited")
            journal.marker(at: t0 + 115, "end", task: Self.invite)
            journal.note(try Self.mark(.outcome, Self.invite, .assisted), at: t0 + 120)
            // Think-aloud: one quote within Publish (8…42), one between tasks (ordinary speech: no problem, so that
            // the problem counts above stay as worked out).
            journal.transcript = [
                TranscriptSegment(device: "d", stream: "voice-1", start: t0 + 21, end: t0 + 22, text: "where is the send button"),
                TranscriptSegment(device: "d", stream: "voice-1", start: t0 + 96, end: t0 + 97, text: "okay next one"),
            ]
        }
        let p2 = try await session(id: 2, iteration: 1, participant: "P2", placed: false) { journal in
            journal.viewDidAppear(at: t0, view: "FeedView", transition: "launch", stack: ["FeedView"], screenshot: Self.image("feed"),
                                  uiState: JournalBuilder.node("UIView", frame: [0, 0, 320, 480], subviews: [
                                      JournalBuilder.node("UIButton", frame: [10, 10, 20, 20], title: "x"),
                                  ]))
            // Publish: no PostPublished: failure; one view, on the expected path.
            journal.marker(at: t0 + 10, "begin", task: Self.publish)
            journal.viewDidAppear(at: t0 + 12, view: "ComposeView", transition: "push", stack: ["FeedView", "ComposeView"],
                                  screenshot: Self.image("compose"))
            Self.lateTap(journal, at: t0 + 20, x: 100, y: 100, target: Self.leaf)
            journal.marker(at: t0 + 40, "end", task: Self.publish)
            // Find settings: never ends; measured until Rate app begins (80), so the pop at 85 is not its.
            journal.marker(at: t0 + 50, "begin", task: Self.settings)
            journal.viewDidAppear(at: t0 + 60, view: "SearchView", transition: "push", stack: ["FeedView", "SearchView"])
            journal.viewDidAppear(at: t0 + 85, view: "FeedView", transition: "pop", stack: ["FeedView"])
            // Rate app: the observer's verdict decides.
            journal.note(try Self.mark(.begin, Self.rate), at: t0 + 80)
            journal.note(try Self.mark(.end, Self.rate), at: t0 + 90)
            journal.note(try Self.mark(.outcome, Self.rate, .success), at: t0 + 91)
            // Invite: never begun.
        }
        // P1's second session of iteration 1: another run of Find settings, later than the first.
        let p1Again = try await session(id: 3, iteration: 1, participant: "P1") { journal in
            journal.marker(at: t0 + 1000, "begin", task: Self.settings)
            journal.marker(at: t0 + 1010, "end", task: Self.settings)
        }
        let p3 = try await session(id: 4, iteration: 2, participant: "P3") { journal in
            journal.marker(at: t0 + 10, "begin", task: Self.publish)
            journal.viewDidAppear(at: t0 + 12, view: "ComposeView", transition: "push", stack: ["FeedView", "ComposeView"])
            journal.custom(at: t0 + 20, name: "PostPublished")
            journal.marker(at: t0 + 30, "end", task: Self.publish)
        }
        let p4 = try await session(id: 5, iteration: 2, participant: "P4") { journal in
            journal.marker(at: t0 + 10, "begin", task: Self.publish)
            journal.custom(at: t0 + 15, name: "PostPublished")
            journal.marker(at: t0 + 25, "end", task: Self.publish)
        }
        func sus(_ iteration: Int, _ participant: String, _ items: [Int], at recorded: Double = 1) throws -> SUSResponse {
            try SUSResponse(iteration: iteration, participant: participant, items: items, recorded: recorded)
        }
        let responses = StudyResponses(
            sus: [
                try sus(1, "P1", [5, 1, 5, 1, 5, 1, 5, 1, 5, 1]),            // 100
                try sus(1, "P2", [1, 5, 1, 5, 1, 5, 1, 5, 1, 5], at: 0),     // 0, replaced by the later answer
                try sus(1, "P2", [4, 2, 4, 2, 4, 2, 4, 2, 4, 2], at: 2),     // 75
                try sus(2, "P3", [3, 3, 3, 3, 3, 3, 3, 3, 3, 3]),            // 50
                try sus(2, "P4", [4, 1, 4, 1, 4, 1, 4, 1, 4, 1]),            // 87.5
            ],
            seq: [
                try SEQResponse(iteration: 1, participant: "P1", task: Self.publish, rating: 6, recorded: 1),
                try SEQResponse(iteration: 1, participant: "P2", task: Self.publish, rating: 3, recorded: 1),
                try SEQResponse(iteration: 1, participant: "P2", task: Self.invite, rating: 2, recorded: 1),
            ])
        return StudyData(study: study, sessions: [p1, p2, p1Again, p3, p4], responses: responses)
    }
}
