import Foundation
import GroupCommit
import JournalStorage
import MuEvalWire
import Logging
import SessionCore
import SessionModel
import TesterPool
import Testing

/// Studies' recruiting on a real catalog, pool and registry: participants get only the fields recruiting
/// named, invitations expire lazily, a replacement keeps the target reachable, and a withdrawal deletes.
@Suite struct RecruitmentTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-recruit-\(UUID().uuidString.prefix(8))").path

    private func studies() throws -> (Studies, SessionRegistry) {
        let catalog = try Catalog(directory: directory)
        let registry = SessionRegistry(catalog: catalog, policy: .reject, journalLimits: JournalWriterLimits(),
                                       counters: CaptureCounters(), tail: LiveTail(), logger: Logger(label: "test")) { _, _ in }
        let pool = try TesterStore(directory: directory)
        _ = try pool.configure(consent: "We record.", fields: [PoolField(name: "gender", label: "Gender", choices: ["female", "male"]),
                                                               PoolField(name: "city", label: "City")], now: 1)
        for (index, gender) in ["female", "female", "male", "male", "male"].enumerated() {
            _ = try pool.enrol(profile: ["gender": gender, "city": "Town \(index)"], consentVersion: 1, now: 2)
        }
        _ = try catalog.createStudy(name: "remote", appId: nil, description: nil, now: 3)
        return (Studies(catalog: catalog, registry: registry, pool: pool, invitationLifetime: 100), registry)
    }

    @Test func recruitedParticipantsCarryOnlyTheNamedFieldsAndInvitationsExpireLazily() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (studies, _) = try studies()
        #expect(throws: RecruitmentError.targetAboveInvited(target: 4, invited: 3)) {
            try studies.recruit(study: "remote", count: 3, quotas: [], requirements: [], iteration: nil, target: 4, deadline: nil, seed: 1, now: 5)
        }
        #expect(try studies.status(study: "remote", now: 5).recruitment == nil, "a refused recruitment stores nothing")
        let result = try studies.recruit(study: "remote", count: 3, quotas: [Quota(field: "gender", value: "female", count: 2)], requirements: [],
                                         iteration: nil, target: nil, deadline: 500, seed: 1, now: 10)
        #expect(result.shortfalls.isEmpty)
        #expect(result.recruitment == Recruitment(study: "remote", iteration: 1, target: 3, deadline: 500, created: 10, seed: 1))
        let study = try studies.study("remote")
        #expect(study.iterations.map(\.number) == [1], "a first iteration is made for a study without one")
        #expect(study.participants.allSatisfy { $0.attributes.keys.sorted() == ["gender"] }, "the city stays in the pool")
        #expect(study.participants.filter { $0.attributes["gender"] == "female" }.count == 2)
        #expect(result.invitations.allSatisfy { $0.expires == 110 && $0.status == .invited })

        try #require(try studies.invitations(study: "remote", now: 50).count == 3)
        var status = try studies.status(study: "remote", now: 111)
        #expect(status.count(.expired) == 3 && status.count(.invited) == 0)

        // The replacement's target counts the invitations that can still be done, not the expired ones.
        let again = try studies.recruit(study: "remote", count: 2, quotas: [], requirements: [], iteration: nil, target: nil,
                                        deadline: nil, seed: 2, now: 120)
        #expect(again.recruitment.target == 2)
        #expect(again.recruitment.deadline == 500, "the deadline stays unless given")
        status = try studies.status(study: "remote", now: 130)
        #expect(status.invitations.count == 5)
        #expect(Set(status.invitations.map(\.participant)).count == 5, "nobody twice")
    }

    /// Issue 54: a study recruited in two iterations has one count of its progress, its recruitment's iteration's,
    /// in the target, in its completion and in `study status`. Before, the target counted iteration 1's done
    /// invitations too (4, out of reach: the completion counts iteration 2's), and `study status` showed 3 of 4
    /// done, then 4 of 4 for a study that never completed.
    @Test func aStudyRecruitedInTwoIterationsCountsItsRecruitmentsIteration() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (studies, _) = try studies()
        let catalog = try Catalog(directory: directory)
        func finish(_ invitations: [Invitation]) throws {
            try catalog.apply(invitations.map { InvitationTransition(code: $0.code, from: [.invited], to: .done) })
        }
        let first = try studies.recruit(study: "remote", count: 2, quotas: [], requirements: [], iteration: nil, target: nil,
                                        deadline: nil, seed: 1, now: 10)
        try finish(first.invitations)
        _ = try studies.addIteration(to: "remote", number: nil, label: nil, now: 20)
        let second = try studies.recruit(study: "remote", count: 2, quotas: [], requirements: [], iteration: 2, target: nil,
                                         deadline: nil, seed: 2, now: 30)
        #expect(second.recruitment.target == 2, "iteration 2's invitations, not iteration 1's done ones too")
        try finish([second.invitations[0]])

        let status = try studies.status(study: "remote", now: 40)
        let recruitment = try #require(status.recruitment)
        #expect(status.count(.done) == 1 && status.count(.invited) == 1, "\(status.counts)")
        #expect(status.allIterationCounts["done"] == 3 && status.allIterationCounts["invited"] == 1, "\(status.allIterationCounts)")
        #expect(status.statuses == InvitationStatus.allCases)
        #expect(status.invitations.count == 4)
        #expect(try studies.verdict(recruitment, now: 40) == .wait(deadline: nil))
        try finish([second.invitations[1]])
        #expect(try studies.status(study: "remote", now: 50).count(.done) == 2)
        #expect(try studies.verdict(recruitment, now: 50) == .complete(.target), "the count shown is the count that completes it")
    }

    @Test func aWithdrawalDeletesTheProfileWithdrawsInvitationsAndOnRequestTheSessions() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (studies, registry) = try studies()
        let result = try studies.recruit(study: "remote", count: 2, quotas: [], requirements: [Requirement(field: "gender", values: ["male"])],
                                         iteration: nil, target: nil, deadline: nil, seed: 4, now: 10)
        let leaving = result.invitations[0].participant
        _ = try await registry.start(name: "recorded", testUser: nil, notes: nil, sensors: [], device: nil,
                                     study: StudyAssignment(study: "remote", iteration: 1, participant: leaving), now: 20)
        let withdrawal = try await studies.withdraw(tester: leaving, deleteRecordings: true, now: 30)
        #expect(withdrawal.tester.profile["gender"] == "male")
        #expect(withdrawal.invitations.map(\.status) == [.withdrawn])
        #expect(withdrawal.stoppedSessions == ["recorded"] && withdrawal.deletedSessions == ["recorded"], "an open session is stopped, then deleted")
        #expect(try registry.sessions().isEmpty)
        #expect(throws: PoolError.noTester(leaving)) { try studies.pool.tester(leaving) }
        #expect(try studies.study("remote").participant(leaving)?.attributes == [:])
        await registry.shutdown()
    }

    /// Before issue 39 the stop the withdrawal made marked the invitation `done` over `withdrawn`, so that a
    /// tester who left counted towards the study's target.
    @Test func aWithdrawnTestersInvitationStaysWithdrawnWhenTheWithdrawalStopsItsSession() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (studies, registry) = try studies()
        let result = try studies.recruit(study: "remote", count: 1, quotas: [], requirements: [], iteration: nil, target: nil,
                                         deadline: nil, seed: 4, now: 10)
        let invitation = try #require(result.invitations.first)
        let phone = ConnectingDevice(id: "phone", hello: DeviceHello(deviceId: "phone", invitation: invitation.code), address: "10.0.0.7")
        let opened = await withCheckedContinuation { continuation in
            let outcome = registry.attach(phone, connection: 1, deviceToken: nil, now: 20) { continuation.resume(returning: $0) }
            guard case .opening = outcome else { Issue.record("decided at once: the invitation is looked up off the caller's thread"); return }
        }
        guard case .attached(let session) = opened else { Issue.record("not attached: \(opened)"); return }
        #expect(try studies.invitations(study: "remote", now: 21).map(\.status) == [.recording])

        let withdrawal = try await studies.withdraw(tester: invitation.participant, deleteRecordings: false, now: 30)
        #expect(withdrawal.stoppedSessions == [session.snapshot.name])
        #expect(try studies.invitations(study: "remote", now: 31).map(\.status) == [.withdrawn])
        await registry.shutdown()
    }
}
