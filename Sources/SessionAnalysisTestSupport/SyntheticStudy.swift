internal import Foundation
public import SessionModel

/// A study of synthetic one-hour sessions for the study report benchmark: `iterations` iterations of
/// `participants` participants each, one `SyntheticHour` per participant with the study's three tasks
/// marked by the app, and every participant's SUS and SEQ answers.
public enum SyntheticStudy {
    public static func write(into directory: String, iterations: Int = 2, participants: Int = 20, events: Int = 100_000,
                             screenshots: Int = 1_000, seconds: Double = 3_600) async throws -> StudyData {
        let tasks = [
            StudyTask(name: "Write a post", timeLimit: 60, success: .view("View3Controller"),
                      expectedPath: ["View1Controller", "View2Controller", "View3Controller"]),
            StudyTask(name: "Publish", success: .view("View7Controller")),
            StudyTask(name: "Change settings", success: .view("View11Controller")),
        ]
        let codes = (1...participants).map { String(format: "P%02d", $0) }
        let study = Study(name: "synthetic study", appId: "org.example.app", description: "Made by the benchmark", created: 0,
                          iterations: (1...iterations).map { StudyIteration(number: $0, label: $0 == 1 ? "baseline" : "redesign \($0 - 1)", created: 0) },
                          tasks: tasks, participants: codes.map { Participant(code: $0, created: 0) }, questions: [])
        var sessions: [SessionRecord] = []
        var responses = StudyResponses()
        for iteration in study.iterations {
            for (index, participant) in study.participants.enumerated() {
                let id = Int64(sessions.count + 1)
                let path = directory + "/session-\(id).sqlite"
                try? FileManager.default.removeItem(atPath: path)
                let variant = iteration.number * 7 + index
                try await SyntheticHour.write(to: path, events: events, screenshots: screenshots, seconds: seconds,
                                              name: "\(participant.code) iteration \(iteration.number)", testUser: participant.code,
                                              study: StudyContext(study: study, iteration: iteration, participant: participant),
                                              variant: variant)
                sessions.append(SessionRecord(id: id, uuid: UUID().uuidString, name: "\(participant.code) iteration \(iteration.number)",
                                              testUser: participant.code, state: .stopped, created: 0, path: path,
                                              assignment: StudyAssignment(study: study.name, iteration: iteration.number,
                                                                          participant: participant.code)))
                responses.sus.append(try SUSResponse(iteration: iteration.number, participant: participant.code,
                                                     items: (0..<10).map { item in item % 2 == 0 ? 3 + (variant + item) % 3 : 1 + (variant + item) % 3 },
                                                     recorded: 0))
                for task in tasks {
                    responses.seq.append(try SEQResponse(iteration: iteration.number, participant: participant.code, task: task.name,
                                                         rating: 1 + (variant + task.name.count) % 7, recorded: 0))
                }
            }
        }
        return StudyData(study: study, sessions: sessions, responses: responses)
    }
}
