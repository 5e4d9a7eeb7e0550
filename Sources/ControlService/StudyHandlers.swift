internal import ControlProtocol
internal import SessionCore
internal import SessionModel
internal import WireProtocol

/// `study`'s actions, `task` and `questionnaire` (docs/STUDIES.md).
struct StudyHandlers: Sendable {
    let studies: Studies

    func run(_ command: ControlRequest.StudyCommand, writer: ControlReplyWriter, now: Double) async throws {
        switch command {
        case .create(let create):
            try await writer.succeed(create, with: try studies.create(name: create.study, appId: create.appId,
                                                                      description: create.description, webApp: create.webApp, now: now))
        case .set(let set):
            try await writer.succeed(set, with: try studies.setWebApp(set.webApp, of: set.study))
        case .list(let list):
            try await writer.succeed(list, with: try studies.list())
        case .show(let show):
            try await writer.succeed(show, with: try studies.data(show.study))
        case .addIteration(let add):
            try await writer.succeed(add, with: try studies.addIteration(to: add.study, number: add.number, label: add.label, now: now))
        case .addTask(let add):
            try await writer.succeed(add, with: try studies.addTask(to: add.study, add.task))
        case .addParticipant(let add):
            try await writer.succeed(add, with: try studies.addParticipant(
                to: add.study, Participant(code: add.code, attributes: add.attributes, created: now)))
        case .addQuestion(let add):
            try await writer.succeed(add, with: try studies.addQuestion(to: add.study, add.question))
        case .recruit(let recruit):
            try await writer.succeed(recruit, with: try studies.recruit(
                study: recruit.study, count: recruit.count, quotas: recruit.quotas, requirements: recruit.requirements,
                iteration: recruit.iteration, target: recruit.target, deadline: recruit.deadline, seed: recruit.seed, now: now))
        case .invitations(let list):
            try await writer.succeed(list, with: try studies.invitations(study: list.study, now: now))
        case .status(let status):
            try await writer.succeed(status, with: try studies.status(study: status.study, now: now))
        }
    }

    /// Stored with `observer`, the user name of the process that asked.
    func mark(_ mark: ControlRequest.MarkTask, observer: String?, now: Double) async throws -> StoredEvent {
        try await studies.mark(mark.mark, task: mark.task, outcome: mark.outcome, comment: mark.comment, in: mark.session,
                               source: .muevalctl, observer: observer, now: now)
    }

    func record(_ answers: ControlRequest.RecordAnswers) throws -> StudyResponses {
        try studies.record(answers.responses, in: answers.study)
    }
}
