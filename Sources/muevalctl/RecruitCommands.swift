internal import ArgumentParser
internal import ControlProtocol
internal import Foundation
internal import MuEvalWire
internal import SessionModel

/// `study recruit`, `study invitations`, `study status`: recruiting a study's participants from the tester pool.
extension StudyCommand {
    struct Recruit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Choose testers from the pool by quota sampling and invite each to the study.",
            discussion: """
                Each chosen tester becomes a participant (code = tester code) with an invitation that pairs one phone to a \
                session of the study. A quota that the pool cannot fill is reported with by how many it fell short. \
                Testers already in the study are never chosen again. Example: \
                muevalctl study recruit wp --count 40 --quota gender=female:20 --quota experience=novice:13 --require device=iPhone
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The study's name.") var study: String
        @Option(help: "How many testers to invite.") var count: Int
        @Option(name: .customLong("quota"), help: ArgumentHelp("FIELD=VALUE:N: exactly N of them with that answer (repeatable).", valueName: "QUOTA"))
        var quotas: [String] = []
        @Option(name: .customLong("require"), help: ArgumentHelp("FIELD=VALUE or FIELD=A|B: every one has it (repeatable).", valueName: "REQUIREMENT"))
        var requirements: [String] = []
        @Option(help: "The iteration they record (default: the recruitment's, else the study's last; a first one is made if none).") var iteration: Int?
        @Option(help: "Invitations of the iteration done for the study to complete (default: all).") var target: Int?
        @Option(help: ArgumentHelp("When the study completes anyway: a date (2026-12-24, the end of that day here), a time (2026-12-24T18:00:00Z), or +7d, +12h, +30m.",
                                   valueName: "DEADLINE"))
        var deadline: String?
        @Option(help: "The seed of the random tie breaks (default: random; shown and stored).") var seed: UInt64?

        func run() async throws {
            let request = ControlRequest.Recruit(
                study: study, count: count, quotas: try quotas.map { try Quota(parsing: $0) },
                requirements: try requirements.map { try Requirement(parsing: $0) }, iteration: iteration, target: target,
                deadline: try deadline.map { try Deadline.parse($0, now: Date()) }, seed: seed)
            try await global.call(request, human: PoolOutput.recruited)
        }
    }

    struct Invitations: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A study's invitations: participant, iteration, code, status (invited, accepted, recording, done, expired, withdrawn).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The study's name.") var study: String

        func run() async throws {
            try await global.call(ControlRequest.ListInvitations(study: study), human: PoolOutput.invitations)
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A recruited study's progress: target, deadline, the iteration's invitations per status, completion.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The study's name.") var study: String

        func run() async throws {
            try await global.call(ControlRequest.RecruitmentProgress(study: study), human: PoolOutput.status)
        }
    }
}

/// `--deadline`: an ISO 8601 time, a date (the end of that day in the local time zone), or `+N` days, hours or minutes from now.
enum Deadline {
    static func parse(_ text: String, now: Date) throws -> Double {
        if text.hasPrefix("+"), let unit = text.last, let amount = Double(text.dropFirst().dropLast()), amount > 0, amount.isFinite {
            let seconds: Double? = switch unit {
            case "d": 86_400
            case "h": 3_600
            case "m": 60
            default: nil
            }
            if let seconds { return now.timeIntervalSince1970 + amount * seconds }
        }
        if let time = ISO8601.parse(text) { return time }
        let day = DateFormatter()
        day.locale = Locale(identifier: "en_US_POSIX")
        day.dateFormat = "yyyy-MM-dd"
        if let start = day.date(from: text), let end = Calendar.current.date(byAdding: .day, value: 1, to: start) {
            return end.timeIntervalSince1970 - 1
        }
        throw Failure("\"\(text)\" is not a deadline: give a date (2026-12-24), a time (2026-12-24T18:00:00Z), or +7d, +12h, +30m")
    }
}
