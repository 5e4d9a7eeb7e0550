import Foundation
import GroupCommit
import JournalStorage
import Logging
import SessionCore
import SessionModel
import TesterPool
import Testing

/// A tester's withdrawal finishes (issue 38): a step that fails leaves it pending with the profile and the
/// secret kept, the tester's retry with the same secret carries out the rest, and a retry after the end
/// hears that it is done. The failure is real: another connection holds the catalog's write lock.
@Suite struct WithdrawalTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-withdraw-\(UUID().uuidString.prefix(8))").path

    @Test func aPendingWithdrawalIsFinishedByTheTestersRetry() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let catalog = try Catalog(directory: directory)
        let registry = SessionRegistry(catalog: catalog, policy: .reject, journalLimits: JournalWriterLimits(),
                                       counters: CaptureCounters(), tail: LiveTail(), logger: Logger(label: "test")) { _, _ in }
        let pool = try TesterStore(directory: directory, codeTakenElsewhere: { try catalog.isParticipantCode($0) })
        _ = try pool.configure(consent: "We record.", fields: [PoolField(name: "city", label: "City")], now: 1)
        let leaving = try pool.enrol(profile: ["city": "Tübingen"], consentVersion: 1, now: 2)
        let staying = try pool.enrol(profile: ["city": "Reutlingen"], consentVersion: 1, now: 2)
        _ = try catalog.createStudy(name: "remote", appId: nil, description: nil, now: 3)
        let studies = Studies(catalog: catalog, registry: registry, pool: pool, invitationLifetime: 100)
        _ = try studies.recruit(study: "remote", count: 1, quotas: [], requirements: [Requirement(field: "city", values: ["Tübingen"])],
                                iteration: nil, target: nil, deadline: nil, seed: 1, now: 10)
        _ = try await registry.start(name: "recorded", testUser: nil, notes: nil, sensors: [], device: nil,
                                     study: StudyAssignment(study: "remote", iteration: 1, participant: leaving.tester.code), now: 20)
        #expect(try catalog.isParticipantCode(leaving.tester.code) && !catalog.isParticipantCode(staying.tester.code))

        let holder = try SQLiteDatabase(path: directory + "/" + Catalog.fileName)
        try holder.execute("BEGIN IMMEDIATE")
        let pending = try await studies.withdraw(tester: leaving.tester.code, secret: leaving.withdrawalSecret, deleteRecordings: true, now: 30)
        #expect(!pending.withdrawn)
        #expect(pending.pending.map(\.step) == ["withdraw the invitations"])
        #expect(try pool.tester(leaving.tester.code) == leaving.tester, "the profile stays until the rest is done")
        #expect(try pool.testers() == [staying.tester], "nor is the leaving tester recruited meanwhile")
        try holder.execute("ROLLBACK")

        // The same code and secret finish it.
        let finished = try await studies.withdraw(tester: leaving.tester.code, secret: leaving.withdrawalSecret, deleteRecordings: false, now: 40)
        #expect(finished.withdrawn && finished.pending.isEmpty)
        #expect(finished.stoppedSessions == ["recorded"] && finished.deletedSessions == ["recorded"], "the first request's deletion holds")
        #expect(finished.tester == leaving.tester)
        #expect(try registry.sessions().isEmpty)
        #expect(throws: PoolError.noTester(leaving.tester.code)) { try pool.tester(leaving.tester.code) }

        // Once more: done, nothing to do, the invitations as they are.
        let again = try await studies.withdraw(tester: leaving.tester.code, secret: leaving.withdrawalSecret, deleteRecordings: true, now: 50)
        #expect(again.withdrawn && again.pending.isEmpty && again.deletedSessions.isEmpty && again.tester.profile.isEmpty)
        #expect(again.invitations.map(\.status) == [.withdrawn])
        #expect(try await studies.resumeWithdrawals(now: 60).isEmpty)
        await registry.shutdown()
    }
}
