import Foundation
import GroupCommit
import JournalStorage
import Logging
import ServiceLifecycle
import SessionCore
import SessionModel
@testable import SessionReports
import TesterPool
import Testing

/// The completion service on a real catalog and registry: what it publishes, writes and runs, once.
@Suite struct StudyCompletionServiceTests {
    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-completion-\(UUID().uuidString.prefix(8))").path

    private struct Lab {
        let catalog: Catalog
        let registry: SessionRegistry
        let studies: Studies
    }

    private func lab() throws -> Lab {
        let catalog = try Catalog(directory: directory)
        let registry = SessionRegistry(catalog: catalog, policy: .reject, journalLimits: JournalWriterLimits(),
                                       counters: CaptureCounters(), tail: LiveTail(), logger: Logger(label: "test"),
                                       events: SessionEvents()) { _, _ in }
        return Lab(catalog: catalog, registry: registry, studies: Studies(catalog: catalog, registry: registry, pool: try TesterStore(directory: directory)))
    }

    /// A study of one iteration with `testers` recruited testers (T1, T2…), each invited, `done` of them done.
    private func recruit(_ lab: Lab, study: String, testers: Int, done: Int, target: Int, deadline: Double?) throws {
        let now = Date().timeIntervalSince1970
        _ = try lab.catalog.createStudy(name: study, appId: nil, description: nil, now: now)
        _ = try lab.catalog.addIteration(to: study, number: 1, label: nil, now: now)
        let codes = (1...testers).map { "T\($0)" }
        let invitations = codes.enumerated().map { index, code in
            Invitation(code: "\(study.prefix(3))invite\(index)", study: study, iteration: 1, participant: code,
                       status: index < done ? .done : .invited, created: now, expires: now + 3600)
        }
        try lab.catalog.createInvitations(invitations, participants: codes.map { Participant(code: $0, created: now) },
                                          recruitment: Recruitment(study: study, iteration: 1, target: target, deadline: deadline, created: now, seed: 7))
    }

    private func service(_ lab: Lab, command: String?, timeout: Double = 20) -> StudyCompletionService {
        let reports = StudyReports(dataDirectory: directory, logger: Logger(label: "test"), slots: ReportSlots(limits: ReportLimits()))
        return StudyCompletionService(catalog: lab.catalog, studies: lab.studies, registry: lab.registry, reports: reports,
                                      settings: StudyCompletionSettings(command: command, timeout: timeout), logger: Logger(label: "test"))
    }

    /// The `.studyCompleted` events of `subscription` until `count` arrived or `seconds` passed.
    private func completions(_ subscription: SessionEventSubscription, count: Int, within seconds: Double) async -> [SessionEvent] {
        await withTaskGroup(of: [SessionEvent].self) { group in
            group.addTask {
                var found: [SessionEvent] = []
                for await event in subscription {
                    if case .studyCompleted = event { found.append(event) }
                    if found.count == count { break }
                }
                return found
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                subscription.cancel()
                return []
            }
            let found = await group.next() ?? []
            group.cancelAll()
            subscription.cancel()
            return found
        }
    }

    @Test func completesByTargetOrDeadlineOnceWithReportEventAndCommand() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lab = try lab()
        let now = Date().timeIntervalSince1970
        try recruit(lab, study: "reached", testers: 3, done: 2, target: 2, deadline: now + 3600)
        try recruit(lab, study: "late", testers: 2, done: 1, target: 2, deadline: now - 60)
        try recruit(lab, study: "soon", testers: 2, done: 0, target: 2, deadline: now + 1.5)
        try recruit(lab, study: "open", testers: 2, done: 1, target: 2, deadline: nil)
        let hooks = directory + "/hooks"
        try FileManager.default.createDirectory(atPath: hooks, withIntermediateDirectories: true)
        let command = "echo \"$MUEVAL_REASON $MUEVAL_DONE/$MUEVAL_TARGET $MUEVAL_REPORT\" > '\(hooks)'/\"$MUEVAL_STUDY\""

        let subscription = lab.registry.events.subscribe()
        let running = Task { [service = service(lab, command: command)] in try await service.run() }
        let events = await completions(subscription, count: 3, within: 60)
        running.cancel()

        let byStudy = Dictionary(events.compactMap { event -> (String, (Recruitment.CompletionReason, String))? in
            guard case .studyCompleted(let study, let reason, let report) = event else { return nil }
            return (study, (reason, report))
        }, uniquingKeysWith: { first, _ in first })
        #expect(byStudy.keys.sorted() == ["late", "reached", "soon"], "\(events)")
        #expect(byStudy["reached"]?.0 == .target)
        #expect(byStudy["late"]?.0 == .deadline)
        #expect(byStudy["soon"]?.0 == .deadline, "the timer, with no event to wake it")
        let report = directory + "/reports/studies/reached/index.html"
        #expect(byStudy["reached"]?.1 == report)
        #expect(FileManager.default.fileExists(atPath: report))
        #expect(try await eventually(20) { FileManager.default.fileExists(atPath: hooks + "/reached") })
        #expect(try String(contentsOfFile: hooks + "/reached", encoding: .utf8) == "target 2/2 \(report)\n")

        let recorded = try lab.catalog.recruitment(study: "late")
        #expect(recorded?.completionReason == .deadline)
        #expect(recorded?.report == directory + "/reports/studies/late/index.html")
        #expect(recorded?.completed != nil)
        #expect(try lab.catalog.recruitment(study: "open")?.completed == nil)

        // A restart: what the catalog says completed is not completed again.
        try FileManager.default.removeItem(atPath: hooks + "/reached")
        let again = lab.registry.events.subscribe()
        let rerun = Task { [service = service(lab, command: command)] in try await service.run() }
        let repeated = await completions(again, count: 1, within: 2)
        rerun.cancel()
        #expect(repeated.isEmpty, "\(repeated)")
        #expect(!FileManager.default.fileExists(atPath: hooks + "/reached"))
        await lab.registry.shutdown()
    }

    /// Graceful shutdown cancels what the service started and waits for it: the completion command still
    /// running is killed with its process group, and `run` returns at once, not after the command's 15 minutes.
    @Test func shutdownKillsTheRunningCommandAndWaitsForIt() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lab = try lab()
        try recruit(lab, study: "due", testers: 1, done: 1, target: 1, deadline: nil)
        let pid = directory + "/command.pid"
        let group = ServiceGroup(services: [service(lab, command: "sleep 900 & echo $! > '\(pid)'; wait", timeout: 1_800)],
                                 logger: Logger(label: "test"))
        let running = Task { try await group.run() }
        #expect(try await eventually(60) { FileManager.default.fileExists(atPath: pid) }, "the command started")
        #expect(try lab.catalog.recruitment(study: "due")?.completed != nil, "recorded before the command ran")
        let child = try String(contentsOfFile: pid, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        func alive() -> Bool {
            guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8) else { return false }
            return !stat.contains(") Z ")
        }
        #expect(alive())

        let stopping = ContinuousClock.now
        await group.triggerGracefulShutdown()
        try await running.value
        // Far above a kill's milliseconds, far below the command's own 900 s.
        #expect(ContinuousClock.now - stopping < .seconds(120))
        #expect(try await eventually(10) { !alive() }, "the command's child \(child) outlived the shutdown")
        await lab.registry.shutdown()
    }
}
