import ControlProtocol
import Foundation
import SessionModel
import Testing
import WireProtocol

/// The typed requests against the lines muevalctl sent before the commands were typed (recorded with
/// the flat `ControlRequest` of then): each decodes to its command's payload, and what the new
/// muevalctl sends is the same JSON object, so old and new clients and daemons understand each other.
@Suite struct RequestWireFormatTests {
    static let answers = StudyResponses(
        sus: [try! SUSResponse(iteration: 1, participant: "P01", items: [4, 2, 4, 1, 5, 2, 5, 1, 4, 2], recorded: 1.5)],
        seq: [try! SEQResponse(iteration: 1, participant: "P01", task: "Edit", rating: 6, recorded: 2)],
        answers: [try! QuestionAnswer(iteration: 1, participant: "P01", question: "q", text: "t", recorded: 3)])

    static let golden: [(line: String, request: ControlRequest)] = [
        (#"{"user":"Jack","iteration":1,"study":"wp","notes":"first","participant":"P01","pairing":true,"device":"iphone-jack","sensors":["UserInputEvent","battery"],"command":"start","name":"jack"}"#,
         .start(.init(name: "jack", device: "iphone-jack", user: "Jack", notes: "first", sensors: ["UserInputEvent", "battery"], pairing: true,
                             assignment: StudyAssignment(study: "wp", iteration: 1, participant: "P01")))),
        (#"{"command":"start"}"#,
         .start(.init())),
        (#"{"session":"jack","command":"stop"}"#,
         .stop(.init(session: "jack"))),
        (#"{"command":"stop","all":true}"#,
         .stop(.init(.all))),
        (#"{"command":"status"}"#,
         .status(.init())),
        (#"{"command":"sessions"}"#,
         .sessions(.init())),
        (#"{"command":"devices"}"#,
         .devices(.init())),
        (#"{"command":"events","classes":[],"limit":100,"session":"3"}"#,
         .events(.init(session: "3"))),
        (#"{"grep":"where is","session":"jack","command":"events","classes":["UserInputEvent"],"limit":0}"#,
         .events(.init(session: "jack", classes: ["UserInputEvent"], limit: 0, grep: "where is"))),
        (#"{"grep":"x","command":"tail","classes":["UserInputEvent"],"since":3,"session":"jack","device":"iphone"}"#,
         .tail(.init(.session("jack"), classes: ["UserInputEvent"], device: "iphone", grep: "x", since: 3))),
        (#"{"all":true,"command":"tail"}"#,
         .tail(.init(.all))),
        (#"{"kind":"problem","command":"note","session":"jack","text":"looks for Publish"}"#,
         .note(.init(session: "jack", text: "looks for Publish", kind: "problem"))),
        (#"{"session":"jack","command":"note","text":"hm"}"#,
         .note(.init(session: "jack", text: "hm"))),
        (#"{"command":"export","classes":[],"format":"plist","session":"jack"}"#,
         .export(.init(session: "jack"))),
        (#"{"session":"jack","command":"export","classes":["UserInputEvent"],"format":"jsonl"}"#,
         .export(.init(session: "jack", format: .jsonl, classes: ["UserInputEvent"]))),
        (#"{"command":"delete","session":"jack"}"#,
         .delete(.init(session: "jack"))),
        (#"{"command":"console"}"#,
         .console(.init())),
        (#"{"command":"study","study":"wp","appId":"org.wordpress","action":"create","label":"About blogs"}"#,
         .study(.create(.init(study: "wp", appId: "org.wordpress", description: "About blogs")))),
        (#"{"command":"study","action":"list"}"#,
         .study(.list(.init()))),
        (#"{"command":"study","study":"wp","action":"show"}"#,
         .study(.show(.init(study: "wp")))),
        (#"{"iteration":2,"command":"study","study":"wp","action":"iteration-add","label":"1.2 beta"}"#,
         .study(.addIteration(.init(study: "wp", number: 2, label: "1.2 beta")))),
        (#"{"command":"study","study":"wp","action":"iteration-add"}"#,
         .study(.addIteration(.init(study: "wp")))),
        (#"{"command":"study","study":"wp","action":"task-add","newTask":{"success":"event:PostPublished","name":"Edit","instructions":"Write","expectedPath":["A","B"],"timeLimit":120}}"#,
         .study(.addTask(.init(study: "wp", task: StudyTask(name: "Edit", instructions: "Write", timeLimit: 120, success: .event("PostPublished"),
                                                  expectedPath: ["A", "B"]))))),
        (#"{"command":"study","study":"wp","participant":"P01","attributes":{"experience":"novice"},"action":"participant-add"}"#,
         .study(.addParticipant(.init(study: "wp", code: "P01", attributes: ["experience": "novice"])))),
        (#"{"action":"participant-add","participant":"P02","attributes":{},"command":"study","study":"wp"}"#,
         .study(.addParticipant(.init(study: "wp", code: "P02")))),
        (#"{"command":"study","study":"wp","action":"question-add","label":"What did you expect?","name":"expectations"}"#,
         .study(.addQuestion(.init(study: "wp", question: StudyQuestion(id: "expectations", text: "What did you expect?"))))),
        (#"{"action":"outcome","command":"task","task":"Edit","outcome":"success","session":"jack","text":"found it"}"#,
         .task(.init(session: "jack", mark: .outcome, task: "Edit", outcome: .success, comment: "found it"))),
        (#"{"session":"jack","command":"task","action":"begin","task":"Edit"}"#,
         .task(.init(session: "jack", mark: .begin, task: "Edit"))),
        (#"{"command":"questionnaire","study":"wp","responses":{"sus":[{"participant":"P01","recorded":1.5,"items":[4,2,4,1,5,2,5,1,4,2],"iteration":1}],"answers":[{"participant":"P01","question":"q","text":"t","recorded":3,"iteration":1}],"seq":[{"participant":"P01","recorded":2,"task":"Edit","rating":6,"iteration":1}]}}"#,
         .questionnaire(.init(study: "wp", responses: answers))),
        (#"{"session":"jack","command":"media"}"#,
         .media(.init(session: "jack"))),
        (#"{"command":"transcribe","session":"jack"}"#,
         .transcribe(.init(session: "jack"))),
        (#"{"command":"import","files":["\/home\/alice\/walk.gpx","\/tmp\/b.log"],"descriptors":true,"into":"3","study":"wp","user":"Jill","importFormat":"gpx","iteration":1,"participant":"P01","again":true,"name":"walk"}"#,
         .import(.init(files: ["/home/alice/walk.gpx", "/tmp/b.log"], format: .gpx, name: "walk", user: "Jill",
                              assignment: StudyAssignment(study: "wp", iteration: 1, participant: "P01"), into: "3", again: true))),
        (#"{"files":["\/home\/alice\/walk.gpx"],"descriptors":true,"command":"import"}"#,
         .import(.init(files: ["/home/alice/walk.gpx"]))),
        // Issue 32's commands, new with their typed form.
        (#"{"command":"study","action":"recruit","study":"wp","count":8,"quotas":[{"field":"gender","value":"female","count":4}],"requirements":[{"field":"device","values":["iPhone","iPad"]}],"iteration":2,"target":6,"deadline":1800000000,"seed":18446744073709551615}"#,
         .study(.recruit(.init(study: "wp", count: 8, quotas: [Quota(field: "gender", value: "female", count: 4)],
                               requirements: [Requirement(field: "device", values: ["iPhone", "iPad"])], iteration: 2, target: 6,
                               deadline: 1_800_000_000, seed: .max)))),
        (#"{"command":"study","action":"recruit","study":"wp","count":3,"quotas":[],"requirements":[]}"#,
         .study(.recruit(.init(study: "wp", count: 3)))),
        (#"{"command":"study","action":"invitations","study":"wp"}"#,
         .study(.invitations(.init(study: "wp")))),
        (#"{"command":"study","action":"status","study":"wp"}"#,
         .study(.status(.init(study: "wp")))),
        // Issue 40's: a study's web app.
        (#"{"command":"study","study":"wp","action":"create","webApp":"https:\/\/lab.example.org\/wp\/"}"#,
         .study(.create(.init(study: "wp", webApp: "https://lab.example.org/wp/")))),
        (#"{"command":"study","action":"set","study":"wp","webApp":"https:\/\/lab.example.org\/wp\/?lang=en"}"#,
         .study(.set(.init(study: "wp", webApp: "https://lab.example.org/wp/?lang=en")))),
        (#"{"command":"study","action":"set","study":"wp","webApp":null}"#,
         .study(.set(.init(study: "wp", webApp: nil)))),
        (#"{"command":"pool","action":"configure","consent":"We record…","fields":[{"name":"gender","label":"Gender","choices":["female","male"]}]}"#,
         .pool(.configure(.init(consent: "We record…", fields: [PoolField(name: "gender", label: "Gender", choices: ["female", "male"])])))),
        (#"{"command":"pool","action":"configure"}"#,
         .pool(.configure(.init()))),
        (#"{"command":"pool","action":"show"}"#,
         .pool(.show(.init()))),
        (#"{"command":"pool","action":"list"}"#,
         .pool(.list(.init()))),
        (#"{"command":"pool","action":"link","rotate":true}"#,
         .pool(.link(.init(rotate: true)))),
        (#"{"command":"pool","action":"enrol","profile":{"gender":"female"}}"#,
         .pool(.enrol(.init(profile: ["gender": "female"])))),
        (#"{"command":"pool","action":"withdraw","tester":"T7K2QM","deleteRecordings":true}"#,
         .pool(.withdraw(.init(tester: "T7K2QM", deleteRecordings: true)))),
    ]

    @Test func everyCommandIsCovered() {
        #expect(Set(Self.golden.map(\.request.command)) == Set(ControlCommand.allCases))
    }

    @Test(arguments: golden.indices)
    func anOldLineDecodesToItsTypedRequest(index: Int) throws {
        let (line, expected) = Self.golden[index]
        #expect(try JSONDecoder().decode(ControlRequest.self, from: Data(line.utf8)) == expected)
    }

    @Test(arguments: golden.indices)
    func aTypedRequestEncodesToTheOldLinesObject(index: Int) throws {
        let (line, request) = Self.golden[index]
        let json = try JSONEncoder().encode(request)
        let encoded = try JSONSerialization.jsonObject(with: json) as? NSDictionary
        let old = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? NSDictionary
        #expect(encoded == old, "\(String(decoding: json, as: UTF8.self))")
    }

    /// The keys a request may leave out, which `muevalctl` always sends: their defaults.
    @Test(arguments: [
        (#"{"command":"study","action":"recruit","study":"wp","count":3}"#, ControlRequest.study(.recruit(.init(study: "wp", count: 3)))),
        (#"{"command":"study","action":"participant-add","study":"wp","participant":"P02"}"#, .study(.addParticipant(.init(study: "wp", code: "P02")))),
        (#"{"command":"study","action":"create","study":"wp"}"#, .study(.create(.init(study: "wp")))),
    ])
    func aLeftOutKeyTakesItsDefault(line: String, expected: ControlRequest) throws {
        #expect(try JSONDecoder().decode(ControlRequest.self, from: Data(line.utf8)) == expected)
    }

    @Test(arguments: [
        (#"{"command":"events"}"#, #"events needs "session""#),
        (#"{"command":"note","session":"1"}"#, #"note needs "text""#),
        (#"{"command":"stop"}"#, #"stop needs "session""#),
        (#"{"command":"study","action":"task-add","study":"wp"}"#, #"study task-add needs "newTask""#),
        (#"{"command":"study","action":"task-add","study":"wp","newTask":{"success":"observer","expectedPath":[]}}"#,
         #"study task-add needs "newTask.name""#),
        (#"{"command":"study"}"#, #"study needs "action""#),
        (#"{"sessions":1}"#, #"a request needs "command""#),
        (#"{"command":"restart"}"#, #""command" must be one of start, stop, status, sessions, devices, events, export, delete, tail, note, console, study, task, questionnaire, media, transcribe, import, pool, not "restart""#),
        (#"{"command":"pool","action":"withdraw"}"#, #"pool withdraw needs "tester""#),
        (#"{"command":"study","action":"set","study":"wp","webapp":"https://x.org/"}"#, #"study set needs "webApp""#),
        (#"{"command":"study","action":"set","study":"wp","webApp":3}"#, #"study set: "webApp" must be a string"#),
        (#"{"command":"study","action":"recruit","study":"wp","count":"all"}"#, #"study recruit: "count" must be a number"#),
        (#"{"command":"task","session":"1","action":"start","task":"Edit"}"#, #"task: "action" must be one of begin, end, outcome, not "start""#),
        (#"{"command":"task","session":"1","action":"outcome","task":"Edit","outcome":"great"}"#,
         #"task: "outcome" must be one of success, failure, abandoned, assisted, not "great""#),
        (#"{"command":"export","session":"1","format":"xml"}"#, #"export: "format" must be one of plist, jsonl, not "xml""#),
        (#"{"command":"events","session":"1","limit":"all"}"#, #"events: "limit" must be a number"#),
        (#"{"command":"events","session":1}"#, #"events: "session" must be a string"#),
        (#"{"command":"start","study":"wp","iteration":1}"#, #"start: a session in a study needs "study", "iteration" and "participant" together"#),
        (#"{"command":"import","files":["a"],"participant":"P01"}"#, #"import: a session in a study needs "study", "iteration" and "participant" together"#),
        (#"{"command":"study","action":"participant-add","study":"wp","participant":"P1","attributes":{"age":30}}"#,
         #"study participant-add: "attributes.age" must be a string"#),
    ])
    func aWrongOrMissingFieldIsNamedInOneLine(line: String, message: String) {
        #expect(throws: ControlRequestError(message)) { try JSONDecoder().decode(ControlRequest.self, from: Data(line.utf8)) }
    }

    @Test func aLineThatIsNoJSONSaysSo() {
        #expect(throws: (any Error).self) {
            do { _ = try JSONDecoder().decode(ControlRequest.self, from: Data("not json".utf8)) } catch {
                #expect(!ControlRequestError.describe(error).contains("\n"))
                #expect(!ControlRequestError.describe(error).isEmpty)
                throw error
            }
        }
    }
}
