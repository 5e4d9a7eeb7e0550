internal import ControlProtocol
internal import Foundation
internal import SessionModel

/// How muevalctl prints studies for people (`--json` prints the records themselves).
enum StudyOutput {
    static func list(_ studies: [Study]) -> String {
        guard !studies.isEmpty else { return "no study yet: create one with `muevalctl study create NAME`\n" }
        var table = TextTable(["NAME", "APP", "ITERATIONS", "TASKS", "PARTICIPANTS", "CREATED", "WEB APP"])
        for study in studies {
            table.add([study.name, study.appId ?? "-", String(study.iterations.count), String(study.tasks.count),
                       String(study.participants.count), ControlOutput.time(study.created), study.webApp ?? "-"])
        }
        return table.render()
    }

    static func show(_ data: StudyData) -> String {
        let study = data.study
        var text = "study \(study.name)" + (study.appId.map { " · app \($0)" } ?? "") + " · created \(ControlOutput.time(study.created))\n"
        if let description = study.description { text += "\(description)\n" }
        if let webApp = study.webApp { text += "web app \(webApp) (invitation pages link it with mueval=CODE)\n" }
        text += "\niterations\n"
        text += study.iterations.isEmpty ? "  none: add one with `muevalctl study iteration add \(study.name)`\n"
            : study.iterations.map { "  \($0.number)  \($0.label ?? "")\n" }.joined()
        text += "\ntasks\n"
        if study.tasks.isEmpty {
            text += "  none: add one with `muevalctl study task add \(study.name) NAME`\n"
        } else {
            var table = TextTable(["  TASK", "SUCCESS", "LIMIT", "EXPECTED PATH"])
            for task in study.tasks {
                table.add(["  " + task.name, task.success.description, task.timeLimit.map { "\(number($0)) s" } ?? "-",
                           task.expectedPath.isEmpty ? "-" : task.expectedPath.joined(separator: " → ")])
            }
            text += table.render()
        }
        text += "\nparticipants\n"
        text += study.participants.isEmpty ? "  none: add one with `muevalctl study participant add \(study.name) P01`\n"
            : study.participants.map { participant in
                "  \(participant.code)  " + participant.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") + "\n"
            }.joined()
        if !study.questions.isEmpty {
            text += "\nquestions\n" + study.questions.map { "  \($0.id)  \($0.text)\n" }.joined()
        }
        text += "\nsessions\n"
        if data.sessions.isEmpty {
            text += "  none: start one with `muevalctl start --study \(study.name) --iteration N --participant CODE`\n"
        } else {
            var table = TextTable(["  ID", "ITERATION", "PARTICIPANT", "STATE", "EVENTS", "NAME"])
            for session in data.sessions {
                table.add(["  \(session.id)", session.iteration.map(String.init) ?? "-", session.participant ?? "-",
                           session.state.rawValue, String(session.events), session.name])
            }
            text += table.render()
        }
        text += "\nquestionnaires\n" + questionnaires(data)
        return text
    }

    /// Per iteration: who answered SUS, how many SEQ and free-text answers there are.
    private static func questionnaires(_ data: StudyData) -> String {
        guard !data.study.iterations.isEmpty else { return "  -\n" }
        return data.study.iterations.map { iteration in
            let sus = data.responses.sus.filter { $0.iteration == iteration.number }.map(\.participant)
            let seq = data.responses.seq.count { $0.iteration == iteration.number }
            let answers = data.responses.answers.count { $0.iteration == iteration.number }
            return "  iteration \(iteration.number): SUS from \(sus.isEmpty ? "nobody yet" : sus.joined(separator: ", ")); "
                + "\(seq) SEQ answer\(seq == 1 ? "" : "s"); \(answers) free-text answer\(answers == 1 ? "" : "s")\n"
        }.joined()
    }

    /// A study with everything recorded for it, from muevald.
    static func data(_ study: String, global: GlobalOptions) async throws -> StudyData {
        try await global.client.call(ControlRequest.ShowStudy(study: study))
    }

    static func number(_ value: Double) -> String {
        Int(exactly: value).map(String.init) ?? String(format: "%.1f", value)
    }
}
