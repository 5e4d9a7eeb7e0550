internal import ArgumentParser
internal import ControlProtocol
internal import Foundation
internal import QRCode
internal import SessionModel

/// `muevalctl pool`: the tester pool studies recruit from (docs/STUDIES.md "Recruiting and remote studies").
struct PoolCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pool",
        abstract: "The tester pool: its consent text and profile form, the enrolment link, its testers, withdrawal.",
        discussion: "Testers enrol on their phones from `muevalctl pool link`; recruit them with `muevalctl study recruit`.",
        subcommands: [Configure.self, Show.self, List.self, Link.self, Enrol.self, Withdraw.self])

    struct Configure: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set the consent text testers agree to (a new version when it changes) and the profile form's fields.",
            discussion: "--field replaces every field: give them all. A field without choices asks for free text.")
        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp("A UTF-8 text file: what is recorded, how long it is kept, how to withdraw.", valueName: "FILE"))
        var consentFile: String?
        @Option(name: .customLong("field"),
                help: ArgumentHelp("NAME=LABEL or NAME=LABEL:choice1,choice2 (repeatable), such as gender=Gender:female,male,diverse.",
                                   valueName: "FIELD"))
        var fields: [String] = []

        func validate() throws {
            guard consentFile != nil || !fields.isEmpty else { throw ValidationError("give --consent-file, --field, or both") }
        }

        func run() async throws {
            let consent = try consentFile.map { file in
                guard let data = FileManager.default.contents(atPath: file) else { throw Failure("cannot read \(file)") }
                guard let text = String(data: data, encoding: .utf8) else { throw Failure("\(file) is not UTF-8 text") }
                return text
            }
            let parsed = try fields.map { try PoolField(parsing: $0) }
            try await global.call(ControlRequest.ConfigurePool(consent: consent, fields: parsed.isEmpty ? nil : parsed)) { settings in
                "pool configured: consent version \(settings.consentVersion), "
                    + "\(settings.fields.count) profile field\(settings.fields.count == 1 ? "" : "s")"
                    + (settings.fields.isEmpty ? "" : " (\(settings.fields.map(\.name).joined(separator: ", ")))") + "\n"
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The consent text, the profile fields, the number of testers and the enrolment link.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await global.call(ControlRequest.ShowPool(), human: PoolOutput.show)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every tester: code, enrolment, consent version agreed to, profile.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await global.call(ControlRequest.ListTesters(), human: PoolOutput.list)
        }
    }

    struct Link: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The link testers enrol from (on the web console's address).",
            discussion: "--rotate makes a new link: the old one stops working.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Make a new link, retiring the old one.") var rotate = false
        @Flag(help: "Also print the link as a QR code for a phone's camera.") var qr = false

        func run() async throws {
            let link = try await global.client.call(ControlRequest.EnrolmentLinkRequest(rotate: rotate))
            try global.show(link) { link in
                guard let url = link.url else {
                    return "\(link.path) (the web console, which serves it, is off: set console.enabled = true)\n"
                }
                // The QR code is the console helper's module; the text form is always there for copying.
                return url + "\n" + (qr ? ((try? QRCode(encoding: url).terminal()) ?? "") : "")
            }
        }
    }

    struct Enrol: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enrol a tester met in person who agreed to the current consent text (testers usually enrol from the link).",
            discussion: "Prints the tester's code and withdrawal secret: give both to the tester; the secret is not shown again.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp("The profile's answers, FIELD=VALUE each, such as gender=female.", valueName: "FIELD=VALUE"))
        var answers: [String] = []

        func run() async throws {
            var profile: [String: String] = [:]
            for answer in answers {
                let parts = answer.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, !parts[0].isEmpty else { throw Failure("\"\(answer)\" is not an answer: give FIELD=VALUE, such as gender=female") }
                profile[parts[0]] = parts[1]
            }
            try await global.call(ControlRequest.EnrolTester(profile: profile)) {
                "enrolled tester \($0.tester.code); withdrawal secret (shown once): \($0.withdrawalSecret)\n"
            }
        }
    }

    struct Withdraw: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Withdraw a tester: delete their profile and withdraw their invitations; says what was deleted and what is pending.",
            discussion: """
                With --delete-recordings, the sessions they recorded in the studies that invited them are deleted too, files included. \
                The withdrawal is recorded first; a step that fails (a session stopping meanwhile) leaves it pending, \
                the profile kept: running this again, or muevald's next start, finishes it. Exits 1 while anything is pending.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The tester's code, such as T7K2QM.") var code: String
        @Flag(help: "Also delete their recorded sessions.") var deleteRecordings = false

        func run() async throws {
            let withdrawal = try await global.client.call(ControlRequest.WithdrawTester(tester: code, deleteRecordings: deleteRecordings))
            try global.show(withdrawal, human: PoolOutput.withdrawal)
            // A script sees that something is left to do; the lines above said what.
            if !withdrawal.withdrawn { throw ExitCode.failure }
        }
    }
}

/// How muevalctl prints the pool and recruitment for people (`--json` prints the records themselves).
enum PoolOutput {
    static func show(_ overview: PoolOverview) -> String {
        let settings = overview.settings
        var text = settings.consentVersion == 0
            ? "consent: none yet: write one with `muevalctl pool configure --consent-file FILE`\n"
            : "consent version \(settings.consentVersion) (changed \(ControlOutput.time(settings.updated)))\n"
                + settings.consent.split(separator: "\n", omittingEmptySubsequences: false).map { "  \($0)\n" }.joined()
        text += "\nprofile fields\n"
        if settings.fields.isEmpty {
            text += "  none: add them with `muevalctl pool configure --field NAME=LABEL:choice1,choice2`\n"
        } else {
            var table = TextTable(["  NAME", "LABEL", "CHOICES"])
            for field in settings.fields {
                table.add(["  " + field.name, field.label, field.isFreeText ? "(free text)" : field.choices.joined(separator: " | ")])
            }
            text += table.render()
        }
        text += "\ntesters: \(overview.testers)\n"
        text += "enrolment link: " + (overview.enrolmentURL ?? "/enrol/\(settings.enrolmentKey) (the web console is off)") + "\n"
        return text
    }

    static func list(_ testers: [Tester]) -> String {
        guard !testers.isEmpty else { return "no tester yet: testers enrol from `muevalctl pool link`\n" }
        var table = TextTable(["CODE", "ENROLLED", "CONSENT", "PROFILE"])
        for tester in testers {
            table.add([tester.code, ControlOutput.time(tester.enrolled), "v\(tester.consentVersion)", profile(tester.profile)])
        }
        return table.render()
    }

    static func withdrawal(_ withdrawal: Withdrawal) -> String {
        var text = withdrawal.withdrawn ? "withdrew tester \(withdrawal.tester.code)\n"
            : "withdrawal of tester \(withdrawal.tester.code) recorded, not finished: run `muevalctl pool withdraw \(withdrawal.tester.code)` again (muevald also finishes it at its next start)\n"
        text += withdrawal.withdrawn ? "  deleted profile: \(profile(withdrawal.tester.profile))\n"
            : "  profile kept until the rest is done: \(profile(withdrawal.tester.profile))\n"
        text += "  invitations withdrawn: " + (withdrawal.invitations.isEmpty ? "none"
            : withdrawal.invitations.map { "\($0.code) (study \($0.study))" }.joined(separator: ", ")) + "\n"
        if !withdrawal.stoppedSessions.isEmpty { text += "  sessions stopped: \(withdrawal.stoppedSessions.joined(separator: ", "))\n" }
        text += "  sessions deleted: " + (withdrawal.deletedSessions.isEmpty ? "none" : withdrawal.deletedSessions.joined(separator: ", ")) + "\n"
        text += withdrawal.pending.map { "  pending: \($0)\n" }.joined()
        return text
    }

    static func recruited(_ result: RecruitmentResult) -> String {
        let recruitment = result.recruitment
        var text = "recruited \(result.invitations.count) tester\(result.invitations.count == 1 ? "" : "s") into \(recruitment.study) "
            + "(iteration \(recruitment.iteration), seed \(recruitment.seed))\n"
        text += result.shortfalls.map { "short: \($0)\n" }.joined()
        text += invitations(result.invitations)
        text += "target: \(recruitment.target) done" + (recruitment.deadline.map { " · deadline \(ControlOutput.time($0))" } ?? "") + "\n"
        return text
    }

    static func invitations(_ invitations: [Invitation]) -> String {
        guard !invitations.isEmpty else { return "no invitations: recruit with `muevalctl study recruit NAME --count N`\n" }
        var table = TextTable(["PARTICIPANT", "ITERATION", "INVITATION", "STATUS", "EXPIRES", "SESSION", "DEVICE"])
        for invitation in invitations {
            table.add([invitation.participant, String(invitation.iteration), invitation.code, invitation.status.rawValue,
                       ControlOutput.time(invitation.expires), invitation.sessionId.map(String.init) ?? "-", invitation.deviceId ?? "-"])
        }
        return table.render()
    }

    static func status(_ status: RecruitmentStatus) -> String {
        guard let recruitment = status.recruitment else {
            return "study \(status.study) has recruited nobody: recruit with `muevalctl study recruit \(status.study) --count N`\n"
        }
        var text = "study \(status.study) · iteration \(recruitment.iteration) · target \(recruitment.target) done"
            + (recruitment.deadline.map { " · deadline \(ControlOutput.time($0))" } ?? "") + "\n"
        text += counts(status.counts, in: status.statuses) + "\n"
        // Invitations of other iterations do not count towards the target: said apart, when there are any.
        if status.allIterationCounts != status.counts {
            text += "every iteration: " + counts(status.allIterationCounts, in: status.statuses) + "\n"
        }
        if let completed = recruitment.completed {
            text += "completed \(ControlOutput.time(completed)) (\(recruitment.completionReason?.rawValue ?? "-"))"
                + (recruitment.report.map { " · report \($0)" } ?? "") + "\n"
        } else {
            text += "not completed: \(status.count(.done)) of \(recruitment.target) done\n"
        }
        return text + "\n" + invitations(status.invitations)
    }

    /// `invited 3 · accepted 1 · …`: every status, in the order given.
    private static func counts(_ counts: [String: Int], in statuses: [InvitationStatus]) -> String {
        statuses.map { "\($0.rawValue) \(counts[$0.rawValue] ?? 0)" }.joined(separator: " · ")
    }

    private static func profile(_ profile: [String: String]) -> String {
        profile.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }
}
