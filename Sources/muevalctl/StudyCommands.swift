internal import ArgumentParser
internal import ControlProtocol
internal import Foundation
internal import SessionModel
internal import StudyAnalysis
internal import StudyMetrics
internal import WireProtocol

/// `muevalctl study`: studies with iterations, tasks, participants and questions (docs/STUDIES.md).
struct StudyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "study",
        abstract: "Create and inspect studies: iterations, tasks, participants and questions across sessions.",
        discussion: "Start a study's session with `muevalctl start --study S --iteration N --participant P` (docs/STUDIES.md).",
        subcommands: [Create.self, SetCommand.self, List.self, Show.self, StudyPart<AddIteration>.self, StudyPart<AddTask>.self,
                      StudyPart<AddParticipant>.self, StudyPart<AddQuestion>.self, ExportCommand.self,
                      Recruit.self, Invitations.self, Status.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a study.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The study's name (letters, digits, '-', '_', '.').") var name: String
        @Option(help: ArgumentHelp("The app under test's id, as its devices announce it.", valueName: "ID")) var appId: String?
        @Option(help: "What the study is about.") var description: String?
        @Option(help: StudyCommand.webAppHelp) var webApp: String?

        func run() async throws {
            try await global.call(ControlRequest.CreateStudy(study: name, appId: appId, description: description, webApp: webApp)) {
                "created study \($0.name)\n"
            }
        }
    }

    /// `study set`: what may change once a study exists.
    struct SetCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set", abstract: "Change a study: name its web app, or remove it.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The study's name.") var name: String
        @Option(help: StudyCommand.webAppHelp) var webApp: String?
        @Flag(help: "Remove the study's web app: invitation pages offer no link to it any more.") var noWebApp = false

        func validate() throws {
            guard (webApp != nil) != noWebApp else { throw ValidationError("give either --web-app URL or --no-web-app") }
        }

        func run() async throws {
            try await global.call(ControlRequest.SetStudy(study: name, webApp: webApp)) { study in
                "study \(study.name): " + (study.webApp.map { "web app \($0)" } ?? "no web app") + "\n"
            }
        }
    }

    static let webAppHelp = ArgumentHelp(
        "The app under test on the web: an absolute http:// or https:// URL. Testers open it from their invitation page, "
            + "with mueval=CODE added to its query.", valueName: "URL")

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every study.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await global.call(ControlRequest.ListStudies(), human: StudyOutput.list)
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A study: its iterations, tasks, participants, questions, sessions and questionnaires.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The study's name.") var name: String

        func run() async throws {
            try await global.call(ControlRequest.ShowStudy(study: name), human: StudyOutput.show)
        }
    }

    struct AddIteration: StudyPartAdding {
        static let part = (name: "iteration", abstract: "A study's iterations.")
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add an iteration (the next number unless --number is given).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The study's name.") var study: String
        @Option(help: "Its number (default: one more than the last).") var number: Int?
        @Option(help: ArgumentHelp("What is tested: an app version or a prototype round.", valueName: "TEXT")) var label: String?

        func run() async throws {
            try await global.call(ControlRequest.AddIteration(study: study, number: number, label: label)) { "added iteration \($0.number) to \(study)\n" }
        }
    }

    struct AddTask: StudyPartAdding {
        static let part = (name: "task", abstract: "A study's tasks.")
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Add a task, done after the study's earlier ones.",
            discussion: "The task's name is the one the app's task begin/end custom events use, if it sends them.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The study's name.") var study: String
        @Argument(help: "The task's name.") var name: String
        @Option(help: ArgumentHelp("What the participant is told.", valueName: "TEXT")) var instructions: String?
        @Option(help: ArgumentHelp("Seconds after which an attempt fails.", valueName: "SECONDS")) var timeLimit: Double?
        @Option(help: ArgumentHelp("event:NAME (a custom event the app sends), view:NAME (a view reached) or observer (the observer's verdict).", valueName: "CRITERION"))
        var success = "observer"
        @Option(help: ArgumentHelp("The views of the shortest way, comma-separated, in order.", valueName: "VIEWS")) var expectedPath: String?

        func run() async throws {
            let task = StudyTask(name: name, instructions: instructions, timeLimit: timeLimit, success: try TaskSuccess(success),
                                 expectedPath: expectedPath.map(\.commaSeparated) ?? [])
            try await global.call(ControlRequest.AddTask(study: study, task: task)) { "added task \"\($0.name)\" to \(study)\n" }
        }
    }

    struct AddParticipant: StudyPartAdding {
        static let part = (name: "participant", abstract: "A study's participants.")
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a participant, known by a pseudonymous code (no personal data).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The study's name.") var study: String
        @Argument(help: "The participant's code, such as P07.") var code: String
        @Option(name: .customLong("attribute"), help: ArgumentHelp("KEY=VALUE, such as experience=novice (repeatable).", valueName: "KEY=VALUE"))
        var attributes: [String] = []

        func run() async throws {
            var pairs: [String: String] = [:]
            for attribute in attributes {
                let parts = attribute.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, !parts[0].isEmpty else { throw Failure(StudyError.badAttribute(attribute).description) }
                pairs[parts[0]] = parts[1]
            }
            try await global.call(ControlRequest.AddParticipant(study: study, code: code, attributes: pairs)) { "added participant \($0.code) to \(study)\n" }
        }
    }

    struct AddQuestion: StudyPartAdding {
        static let part = (name: "question", abstract: "A study's own questions, answered in free text.")
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a question participants answer after an iteration.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The study's name.") var study: String
        @Argument(help: "A short id for the question, such as expectations.") var id: String
        @Argument(help: "The question.") var text: String

        func run() async throws {
            try await global.call(ControlRequest.AddQuestion(study: study, question: StudyQuestion(id: id, text: text))) { "added question \($0.id) to \(study)\n" }
        }
    }

    struct ExportCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write a study's numbers as CSV: one row per participant × task × iteration (docs/STUDIES.md lists the columns).",
            discussion: "The sessions' files are analysed here, as `report` does: muevalctl needs to read them.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The study's name.") var study: String
        @Option(help: "csv (the only format).") var format: StudyExportFormat = .csv
        @Option(help: "Only this iteration.") var iteration: Int?
        @Option(name: [.short, .customLong("output")], help: ArgumentHelp("Write to FILE instead of standard output.", valueName: "FILE")) var output: String?

        enum StudyExportFormat: String, ExpressibleByArgument, CaseIterable { case csv }

        func run() async throws {
            let data = try await StudyOutput.data(study, global: global)
            let results = try await StudyAnalyzer.analyze(data, iteration: iteration)
            let sink = try output.map(Output.create) ?? .standardOutput
            try sink.write(StudyExport.csv(results))
            if let output {
                try sink.close()
                Output.message("exported \(results.attempts.count) attempts of study \(study) to \(output)")
            }
        }
    }
}

/// `study iteration add`, `study task add`…: a part of a study, added by the one subcommand of its group.
protocol StudyPartAdding: AsyncParsableCommand {
    /// The group's name and abstract.
    static var part: (name: String, abstract: String) { get }
}

/// The group `study PART`, whose one subcommand is `add`.
struct StudyPart<Add: StudyPartAdding>: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: Add.part.name, abstract: Add.part.abstract, subcommands: [Add.self])
    }
}

/// `muevalctl task`: the observer's task marks in a session.
struct TaskMarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "task",
        abstract: "Mark a study task in a session: when the participant begins or ends it, or your verdict on the attempt.",
        discussion: """
            muevalctl task SESSION begin NAME · muevalctl task SESSION end NAME · \
            muevalctl task SESSION outcome NAME success|failure|abandoned|assisted [--comment TEXT]. \
            A verdict overrides the outcome derived from the task's success criterion, and is reported as such.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Session id or name.") var session: String
    @Argument(help: "begin, end or outcome.") var mark: TaskMark
    @Argument(help: "The study task's name.") var task: String
    @Argument(help: "With outcome: success, failure, abandoned or assisted.") var outcome: TaskOutcome?
    @Option(help: "A note to keep with the mark (why this verdict).") var comment: String?

    func validate() throws {
        guard (mark == .outcome) == (outcome != nil) else {
            throw ValidationError(mark == .outcome ? "give the verdict: success, failure, abandoned or assisted" : "only `outcome` takes a verdict")
        }
    }

    func run() async throws {
        let request = ControlRequest.MarkTask(session: session, mark: mark, task: task, outcome: outcome, comment: comment)
        try global.show(stored: try await global.client.call(request), as: "mark")
    }
}

/// `muevalctl questionnaire`: a participant's answers, checked by muevald before anything is stored.
struct QuestionnaireCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "questionnaire",
        abstract: "Record a participant's questionnaire answers: SUS, the Single Ease Question of a task, or a free-text answer.",
        subcommands: [SUSCommand.self, SEQCommand.self, AnswerCommand.self])

    /// Who answers, and where muevald is.
    struct Taker: ParsableArguments {
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The study's name.") var study: String
        @Option(help: "The iteration.") var iteration: Int
        @Option(help: ArgumentHelp("The participant's code.", valueName: "CODE")) var participant: String

        /// Sends the answers, which muevald stores all or none, and prints `done` (or them, with --json).
        func record(_ responses: StudyResponses, done: String) async throws {
            try await global.call(ControlRequest.RecordAnswers(study: study, responses: responses)) { _ in done }
        }
    }

    struct SUSCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sus",
            abstract: "The System Usability Scale: ten answers 1 (strongly disagree) to 5 (strongly agree), in questionnaire order.",
            discussion: SUSResponse.statements.enumerated().map { "\($0.offset + 1). \($0.element)" }.joined(separator: "\n"))
        @OptionGroup var taker: Taker
        @Option(help: ArgumentHelp("The ten answers, comma-separated: 4,2,4,1,5,2,5,1,4,2.", valueName: "LIST")) var answers: String

        func run() async throws {
            let items = try answers.commaSeparated.enumerated().map { index, text in
                guard let value = Int(text) else { throw Failure("SUS item \(index + 1) is \"\(text)\": answers are numbers from 1 to 5") }
                return value
            }
            let response = try SUSResponse(iteration: taker.iteration, participant: taker.participant, items: items,
                                           recorded: Date().timeIntervalSince1970)
            let score = SUS.score(items) ?? 0
            try await taker.record(StudyResponses(sus: [response]), done: "recorded the SUS answers of \(taker.participant) in iteration "
                                   + "\(taker.iteration): score \(StudyOutput.number(score)) (grade \(SUSGrade(score: score).rawValue))\n")
        }
    }

    struct SEQCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "seq", abstract: "The Single Ease Question after a task: \(SEQResponse.question) 1 (very difficult) to 7 (very easy).")
        @OptionGroup var taker: Taker
        @Option(help: "The task's name.") var task: String
        @Option(help: "1 to 7.") var rating: Int

        func run() async throws {
            let response = try SEQResponse(iteration: taker.iteration, participant: taker.participant, task: task, rating: rating,
                                           recorded: Date().timeIntervalSince1970)
            try await taker.record(StudyResponses(seq: [response]),
                                   done: "recorded SEQ \(rating) of \(taker.participant) for \"\(task)\" in iteration \(taker.iteration)\n")
        }
    }

    struct AnswerCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "answer", abstract: "A free-text answer to one of the study's questions.")
        @OptionGroup var taker: Taker
        @Option(help: ArgumentHelp("The question's id.", valueName: "ID")) var question: String
        @Argument(help: "The answer.") var text: String

        func run() async throws {
            let answer = try QuestionAnswer(iteration: taker.iteration, participant: taker.participant, question: question, text: text,
                                            recorded: Date().timeIntervalSince1970)
            try await taker.record(StudyResponses(answers: [answer]),
                                   done: "recorded the answer of \(taker.participant) to \(question) in iteration \(taker.iteration)\n")
        }
    }
}
