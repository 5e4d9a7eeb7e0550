@testable import ConsoleServer
import Foundation
import MuEvalWire
import SessionModel
import Testing
import WireProtocol

/// The study calls' request bodies, decoded and checked as the API does, without sockets.
@Suite struct StudyRequestTests {
    private func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(json.utf8))
    }

    @Test func aCompleteQuestionnaireBecomesResponsesRecordedNow() throws {
        let form = try decode(QuestionnaireRequest.self, """
            {"responses": {"sus": [{"iteration": 1, "participant": "P1", "items": [5,1,5,1,5,1,5,1,5,1]}],
                           "seq": [{"iteration": 1, "participant": "P1", "task": "Sign up", "rating": 7}],
                           "answers": [{"iteration": 1, "participant": "P1", "question": "q1", "text": "Fine"}]}}
            """)
        let responses = try form.responses.checked(now: 42)
        #expect(responses.sus.map(\.items) == [[5, 1, 5, 1, 5, 1, 5, 1, 5, 1]])
        #expect(responses.seq.map(\.rating) == [7])
        #expect(responses.answers.map(\.text) == ["Fine"])
        #expect((responses.sus.map(\.recorded) + responses.seq.map(\.recorded) + responses.answers.map(\.recorded)).allSatisfy { $0 == 42 })
    }

    /// Decoding checks no ranges: the model's initialisers do, naming the item, before anything is stored.
    @Test func anAnswerOutOfRangeOrMissingIsRefusedNamingTheItem() throws {
        let outOfRange = try decode(QuestionnaireRequest.self, """
            {"responses": {"sus": [{"iteration": 1, "participant": "P1", "items": [5,1,5,1,5,1,9,1,5,1]}]}}
            """)
        #expect(throws: StudyError.answerOutOfRange(questionnaire: "SUS", item: "item 7", value: 9, scale: 1...5)) {
            try outOfRange.responses.checked(now: 0)
        }
        let short = try decode(QuestionnaireRequest.self, """
            {"responses": {"sus": [{"iteration": 1, "participant": "P1", "items": [3,3,3]}]}}
            """)
        #expect(throws: StudyError.incompleteAnswer(questionnaire: "SUS", item: "item 4")) { try short.responses.checked(now: 0) }
        let seq = try decode(QuestionnaireRequest.self, """
            {"responses": {"seq": [{"iteration": 1, "participant": "P1", "task": "Sign up", "rating": 0}]}}
            """)
        #expect(throws: StudyError.answerOutOfRange(questionnaire: "SEQ", item: "task \"Sign up\"", value: 0, scale: 1...7)) {
            try seq.responses.checked(now: 0)
        }
        let blank = try decode(QuestionnaireRequest.self, """
            {"responses": {"answers": [{"iteration": 1, "participant": "P1", "question": "q1", "text": "  "}]}}
            """)
        #expect(throws: StudyError.incompleteAnswer(questionnaire: "questions", item: "question \"q1\"")) { try blank.responses.checked(now: 0) }
    }

    @Test func aTaskMarkNeedsAnActionAndAKnownOutcome() throws {
        let outcome = try decode(TaskMarkRequest.self, #"{"action": "outcome", "task": "Sign up", "outcome": "assisted"}"#).checked()
        #expect(outcome.0 == .outcome && outcome.1 == .assisted)
        let begin = try decode(TaskMarkRequest.self, #"{"action": "begin", "task": "Sign up"}"#).checked()
        #expect(begin.0 == .begin && begin.1 == nil)
        #expect(throws: ConsoleError.self) { try decode(TaskMarkRequest.self, #"{"action": "start", "task": "x"}"#).checked() }
        #expect(throws: ObserverNoteError.unknownOutcome("won")) {
            try decode(TaskMarkRequest.self, #"{"action": "outcome", "task": "x", "outcome": "won"}"#).checked()
        }
    }

    @Test func aTaskTakesItsCriterionAsTheCLIWritesIt() throws {
        let task = try decode(NewTask.self, #"{"name": "Sign up", "timeLimit": 90, "success": "view:Welcome", "expectedPath": ["Start", " ", "Welcome"]}"#).task()
        #expect(task == StudyTask(name: "Sign up", timeLimit: 90, success: .view("Welcome"), expectedPath: ["Start", "Welcome"]))
        #expect(try decode(NewTask.self, #"{"name": "x"}"#).task().success == .observer)
        #expect(throws: StudyError.badSuccess("click:Save")) { try decode(NewTask.self, #"{"name": "x", "success": "click:Save"}"#).task() }
    }

    @Test func aSessionIsInAStudyWithAllThreeOrNone() throws {
        #expect(try StartSession().assignment() == nil)
        #expect(try StartSession(study: "s", iteration: 2, participant: "P1").assignment() == StudyAssignment(study: "s", iteration: 2, participant: "P1"))
        #expect(throws: ConsoleError.self) { try StartSession(study: "s", participant: "P1").assignment() }
    }

    @Test func theQuestionnaireTextsAreTheModelsOwn() throws {
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(QuestionnaireItems())) as? [String: Any]
        #expect(json?["susStatements"] as? [String] == SUSResponse.statements)
        #expect(json?["seqQuestion"] as? String == SEQResponse.question)
        #expect(json?["outcomes"] as? [String] == ["success", "failure", "abandoned", "assisted"])
    }
}
