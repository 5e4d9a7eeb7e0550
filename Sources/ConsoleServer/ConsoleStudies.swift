internal import SessionCore
internal import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import NIOCore
internal import SessionModel
internal import StudyAnalysis
internal import WireProtocol

/// The study calls of the JSON API (docs/CONSOLE.md, docs/STUDIES.md): the same changes and reads
/// as `muevalctl study …`, `task` and `questionnaire`, through the daemon's one `Studies`.
extension ConsoleAPI {
    func registerStudies(on api: RouterGroup<ConsoleContext>) {
        let studies = environment.studies
        api.get("questionnaire") { _, _ in try encode(QuestionnaireItems()) }
        api.get("studies") { _, _ in try encode(try await studied { try await blocking { try studies.list() } }) }
        api.post("studies") { request, context in
            let new = try await decode(NewStudy.self, from: request, context: context)
            let study = try await studied {
                try await blocking {
                    try studies.create(name: new.name ?? "", appId: new.appId.nonEmpty, description: new.description.nonEmpty,
                                       now: Date().timeIntervalSince1970)
                }
            }
            return try encode(study, status: .created)
        }
        api.get("studies/:study") { _, context in
            let name = try studyName(context)
            return try encode(try await studied { try await blocking { try studies.data(name) } })
        }
        api.post("studies/:study/iterations") { request, context in
            let name = try studyName(context)
            let new = try await decode(NewIteration.self, from: request, context: context)
            return try encode(try await studied {
                try await blocking { try studies.addIteration(to: name, number: new.number, label: new.label.nonEmpty, now: Date().timeIntervalSince1970) }
            }, status: .created)
        }
        api.post("studies/:study/tasks") { request, context in
            let name = try studyName(context)
            let new = try await decode(NewTask.self, from: request, context: context)
            _ = try ConsoleInput.checked(new.timeLimit, as: .duration, field: "timeLimit")
            return try encode(try await studied {
                let task = try new.task()
                return try await blocking { try studies.addTask(to: name, task) }
            }, status: .created)
        }
        api.post("studies/:study/participants") { request, context in
            let name = try studyName(context)
            let new = try await decode(NewParticipant.self, from: request, context: context)
            return try encode(try await studied {
                try await blocking {
                    try studies.addParticipant(to: name, Participant(code: new.code ?? "", attributes: new.attributes ?? [:],
                                                                     created: Date().timeIntervalSince1970))
                }
            }, status: .created)
        }
        api.post("studies/:study/questions") { request, context in
            let name = try studyName(context)
            let new = try await decode(NewQuestion.self, from: request, context: context)
            return try encode(try await studied {
                try await blocking { try studies.addQuestion(to: name, StudyQuestion(id: new.id ?? "", text: new.text ?? "")) }
            }, status: .created)
        }
        api.post("studies/:study/questionnaire") { request, context in
            let name = try studyName(context)
            let form = try await decode(QuestionnaireRequest.self, from: request, context: context)
            return try encode(try await studied {
                let responses = try form.responses.checked(now: Date().timeIntervalSince1970)
                return try await blocking { try studies.record(responses, in: name) }
            }, status: .created)
        }
        api.get("studies/:study/export.csv") { _, context in
            let name = try studyName(context)
            let data = try await studied { try await blocking { try studies.data(name) } }
            let csv = StudyExport.csv(try await StudyAnalyzer.analyze(data))
            return Response(status: .ok, headers: [
                .contentType: "text/csv; charset=utf-8",
                // Study names are letters, digits, '-', '_' and '.' (StudyError.checkName): safe in the header as they are.
                .contentDisposition: "attachment; filename=\"study-\(name).csv\"",
                .cacheControl: "no-cache",
            ], body: ResponseBody(byteBuffer: ByteBuffer(string: csv)))
        }
        api.get("studies/:study/report") { request, context in
            let name = try studyName(context)
            _ = try await studied { try await blocking { try studies.study(name) } }
            let iteration = try ConsoleInput.integer(request.uri.queryParameters.get("iteration"), name: "iteration", in: 1...Int.max)
            return try encode(reports.source.studyState(name, iteration))
        }
        api.post("studies/:study/report") { request, context in
            let name = try studyName(context)
            let choice = try await decode(StudyReportChoice.self, from: request, context: context)
            let data = try await studied { try await blocking { try studies.data(name) } }
            if let iteration = choice.iteration, data.study.iteration(iteration) == nil {
                throw ConsoleError.badRequest(StudyError.noIteration(study: name, iteration: iteration).description)
            }
            return try encode(reports.source.startStudy(data, choice.iteration), status: .accepted)
        }
        api.post("sessions/:session/tasks") { request, context in
            let key = try sessionKey(context)
            let form = try await decode(TaskMarkRequest.self, from: request, context: context)
            let event = try await studied {
                let (mark, outcome) = try form.checked()
                return try await mapped {
                    try await studies.mark(mark, task: form.task ?? "", outcome: outcome, comment: form.comment.nonEmpty, in: key,
                                           source: .console, observer: nil, at: try ConsoleInput.time(form.at, field: "at"), now: Date().timeIntervalSince1970)
                }
            }
            return ConsoleResponse.json(ConsoleEvent.json(event), status: .created)
        }
    }

    private func studyName(_ context: ConsoleContext) throws -> String {
        guard let name = context.parameters.get("study", as: String.self), !name.isEmpty else { throw ConsoleError.badRequest("no study given") }
        return name
    }

    /// Study errors as HTTP statuses, as the registry's: an unknown study is a 404, one that exists
    /// already a 409, any other refusal (a bad name, an answer out of range) a 400 with its message.
    func studied<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as StudyError {
            switch error {
            case .noStudy: throw ConsoleError.notFound(error.description)
            case .studyExists, .iterationExists, .taskExists, .participantExists, .questionExists: throw ConsoleError.conflict(error.description)
            default: throw ConsoleError.badRequest(error.description)
            }
        } catch let error as ObserverNoteError {
            throw ConsoleError.badRequest(error.description)
        }
    }
}

/// The questionnaires' fixed texts, spelled once in SessionModel: the questionnaire page shows these.
struct QuestionnaireItems: Encodable {
    struct Scale: Encodable { var lowest: Int; var highest: Int }
    var susStatements = SUSResponse.statements
    var susScale = Scale(lowest: SUSResponse.scale.lowerBound, highest: SUSResponse.scale.upperBound)
    var seqQuestion = SEQResponse.question
    var seqScale = Scale(lowest: SEQResponse.scale.lowerBound, highest: SEQResponse.scale.upperBound)
    var outcomes = TaskOutcome.allCases.map(\.rawValue)
}

/// `POST /api/studies`.
struct NewStudy: Decodable {
    var name: String?
    var appId: String?
    var description: String?
}

/// `POST /api/studies/S/iterations`: no number, the next one.
struct NewIteration: Decodable {
    var number: Int?
    var label: String?
}

/// `POST /api/studies/S/tasks`: the fields of `muevalctl study task add`.
struct NewTask: Decodable {
    var name: String?
    var instructions: String?
    var timeLimit: Double?
    /// `event:NAME`, `view:NAME` or `observer` (the default).
    var success: String?
    var expectedPath: [String]?

    func task() throws(StudyError) -> StudyTask {
        StudyTask(name: name ?? "", instructions: instructions.nonEmpty, timeLimit: timeLimit,
                  success: try success.nonEmpty.map { text throws(StudyError) in try TaskSuccess(text) } ?? .observer,
                  expectedPath: (expectedPath ?? []).compactMap { Optional($0).nonEmpty })
    }
}

/// `POST /api/studies/S/participants`.
struct NewParticipant: Decodable {
    var code: String?
    var attributes: [String: String]?
}

/// `POST /api/studies/S/questions`.
struct NewQuestion: Decodable {
    var id: String?
    var text: String?
}

/// `POST /api/studies/S/questionnaire`: `StudyResponses` as JSON, without the `recorded` times
/// (the server's clock sets them). Decoding alone checks no ranges, so every answer goes through
/// the model's checking initialisers before anything is stored: all are recorded, or none.
struct QuestionnaireRequest: Decodable {
    struct SUS: Decodable { var iteration: Int; var participant: String; var items: [Int] }
    struct SEQ: Decodable { var iteration: Int; var participant: String; var task: String; var rating: Int }
    struct Answer: Decodable { var iteration: Int; var participant: String; var question: String; var text: String }
    struct Responses: Decodable {
        var sus: [SUS]?
        var seq: [SEQ]?
        var answers: [Answer]?

        func checked(now: Double) throws(StudyError) -> StudyResponses {
            var responses = StudyResponses()
            for answer in sus ?? [] {
                responses.sus.append(try SUSResponse(iteration: answer.iteration, participant: answer.participant, items: answer.items, recorded: now))
            }
            for answer in seq ?? [] {
                responses.seq.append(try SEQResponse(iteration: answer.iteration, participant: answer.participant, task: answer.task,
                                                     rating: answer.rating, recorded: now))
            }
            for answer in answers ?? [] {
                responses.answers.append(try QuestionAnswer(iteration: answer.iteration, participant: answer.participant,
                                                            question: answer.question, text: answer.text, recorded: now))
            }
            return responses
        }
    }
    var responses: Responses
}

/// `POST /api/sessions/ID/tasks`: an observer's task mark, as `muevalctl task`.
struct TaskMarkRequest: Decodable {
    var action: String?
    var task: String?
    var outcome: String?
    var comment: String?
    /// The moment in device time (the replay's playhead); absent while live.
    var at: Double?

    func checked() throws -> (TaskMark, TaskOutcome?) {
        guard let mark = action.flatMap(TaskMark.init(rawValue:)) else {
            throw ConsoleError.badRequest("a task mark's action is \(TaskMark.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return (mark, try outcome.nonEmpty.map { text throws(ObserverNoteError) in try TaskOutcome(checking: text) })
    }
}

/// `POST /api/studies/S/report`: one iteration, or all.
struct StudyReportChoice: Decodable {
    var iteration: Int?
}
