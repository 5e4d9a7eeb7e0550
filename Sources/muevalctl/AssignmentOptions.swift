internal import ArgumentParser
internal import SessionModel

/// `--study S --iteration N --participant P`: the study a session records (start, import), all three or none.
struct AssignmentOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The study the session is part of (with --iteration and --participant).", valueName: "NAME")) var study: String?
    @Option(help: ArgumentHelp("The study's iteration.", valueName: "N")) var iteration: Int?
    @Option(help: ArgumentHelp("The participant's code; also the test user unless --user is given.", valueName: "CODE")) var participant: String?

    func validate() throws {
        let given = [study != nil, iteration != nil, participant != nil]
        guard given.allSatisfy({ $0 }) || given.allSatisfy({ !$0 }) else {
            throw ValidationError("a session in a study needs --study, --iteration and --participant together")
        }
    }

    var assignment: StudyAssignment? {
        guard let study, let iteration, let participant else { return nil }
        return StudyAssignment(study: study, iteration: iteration, participant: participant)
    }
}
