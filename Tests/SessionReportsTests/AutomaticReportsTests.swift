import Foundation
import GroupCommit
import JournalStorage
import Logging
import SessionCore
import SessionModel
@testable import SessionReports
import Testing

/// The daemon's automatic report: every session stopped while it runs gets its default report, even
/// when the lifecycle events that said so were dropped for a slow reader.
@Suite struct AutomaticReportsTests {
    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-reports-\(UUID().uuidString.prefix(8))").path

    private func registry(buffer: Int) throws -> SessionRegistry {
        SessionRegistry(catalog: try Catalog(directory: directory), policy: .reject, journalLimits: JournalWriterLimits(),
                        counters: CaptureCounters(), tail: LiveTail(), logger: Logger(label: "test"),
                        events: SessionEvents(capacity: buffer)) { _, _ in }
    }

    private func automaticReports(_ reports: SessionReports, _ registry: SessionRegistry, limit: Int = 2) throws -> AutomaticReports {
        AutomaticReports(reports: reports, registry: registry, queue: try ReportQueue(dataDirectory: directory), limit: limit,
                         logger: Logger(label: "test"))
    }

    private func index(_ session: Int64) -> String { "\(directory)/reports/\(session)/default/index.html" }
    /// The page and problems.json, the last file a report writes: a test that removes its directory before that
    /// made the report fail, logged as an error (the CI log of 2026-11-29).
    private func written(_ session: Int64) -> Bool {
        FileManager.default.fileExists(atPath: index(session))
            && FileManager.default.fileExists(atPath: "\(directory)/reports/\(session)/default/problems.json")
    }

    @Test func sessionsStoppedWhileTheirEventsWereDroppedGetTheirReports() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Room for one event: the three starts and stops overflow it before the service reads.
        let registry = try registry(buffer: 1)
        let reports = SessionReports(dataDirectory: directory, logger: Logger(label: "test"))
        let service = try automaticReports(reports, registry)
        var stopped: [Int64] = []
        for name in ["a", "b", "c"] {
            _ = try await registry.start(name: name, testUser: nil, notes: nil, sensors: [], device: nil, now: Date().timeIntervalSince1970)
            stopped.append(try await registry.stop(name, now: Date().timeIntervalSince1970).id)
        }
        let running = Task { try await service.run() }
        defer { running.cancel() }
        #expect(try await eventually(30) { stopped.allSatisfy(written) },
                "reports of \(stopped)")
        await registry.shutdown()
    }

    @Test func aDeletedSessionsReportsGoWithItWhoeverDeletedIt() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let registry = try registry(buffer: 100)
        let reports = SessionReports(dataDirectory: directory, logger: Logger(label: "test"))
        let service = try automaticReports(reports, registry)
        let running = Task { try await service.run() }
        defer { running.cancel() }
        var stopped: [Int64] = []
        for name in ["kept", "deleted"] {
            _ = try await registry.start(name: name, testUser: nil, notes: nil, sensors: [], device: nil, now: Date().timeIntervalSince1970)
            stopped.append(try await registry.stop(name, now: Date().timeIntervalSince1970).id)
        }
        #expect(try await eventually(30) { stopped.allSatisfy(written) })
        // As `muevalctl delete` and a tester's withdrawal do: through the registry, not the console.
        _ = try registry.delete("deleted")
        #expect(try await eventually(30) { !FileManager.default.fileExists(atPath: "\(directory)/reports/\(stopped[1])") },
                "the deleted session's reports are gone")
        #expect(FileManager.default.fileExists(atPath: index(stopped[0])), "the other session's stay")
        await registry.shutdown()
    }

    /// Issue 52: ~150 sessions stopping within seconds had 67 reports refused (`reports.max_queued`). Automatic reports
    /// wait in the durable queue instead, however many: here 12 stops against one report at a time and one waiting.
    @Test func manySessionsStoppingTogetherAllGetTheirReportsAndTheQueueEmpties() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let registry = try registry(buffer: 100)
        let reports = SessionReports(dataDirectory: directory, logger: Logger(label: "test"),
                                     slots: ReportSlots(limits: ReportLimits(maxConcurrent: 1, maxQueued: 1)))
        let service = try automaticReports(reports, registry, limit: 1)
        let running = Task { try await service.run() }
        defer { running.cancel() }
        var stopped: [Int64] = []
        for index in 0..<12 {
            _ = try await registry.start(name: "s\(index)", testUser: nil, notes: nil, sensors: [], device: nil, now: Date().timeIntervalSince1970)
            stopped.append(try await registry.stop("s\(index)", now: Date().timeIntervalSince1970).id)
        }
        #expect(try await eventually(60) { stopped.allSatisfy(written) }, "reports of \(stopped.filter { !written($0) }) missing")
        let queue = try ReportQueue(dataDirectory: directory)
        #expect(try await eventually(30) { queue.sessions().isEmpty && service.status == ReportQueueStatus(waiting: 0, writing: 0) },
                "queue \(queue.sessions()), status \(service.status)")
        await registry.shutdown()
    }

    /// A restart finds the queue as the last run left it: those reports are written first.
    @Test func reportsQueuedBeforeARestartAreWrittenAfterIt() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let registry = try registry(buffer: 100)
        var stopped: [Int64] = []
        for name in ["before", "restart"] {
            _ = try await registry.start(name: name, testUser: nil, notes: nil, sensors: [], device: nil, now: Date().timeIntervalSince1970)
            stopped.append(try await registry.stop(name, now: Date().timeIntervalSince1970).id)
        }
        // As a muevald killed after the stops were queued and before their reports were written leaves it.
        let queue = try ReportQueue(dataDirectory: directory)
        for session in stopped { try queue.add(session) }
        #expect(!stopped.contains(where: written))
        let service = try automaticReports(SessionReports(dataDirectory: directory, logger: Logger(label: "test")), registry)
        let running = Task { try await service.run() }
        defer { running.cancel() }
        #expect(try await eventually(60) { stopped.allSatisfy(written) && queue.sessions().isEmpty })
        await registry.shutdown()
    }

    @Test func theQueueHoldsSessionIdsInOrderAndIgnoresOtherNames() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let queue = try ReportQueue(dataDirectory: directory)
        for session: Int64 in [12, 3, 100] { try queue.add(session) }
        try queue.add(3)  // queued twice: once
        _ = FileManager.default.createFile(atPath: queue.directory + "/.#3", contents: nil)
        _ = FileManager.default.createFile(atPath: queue.directory + "/notes.txt", contents: nil)
        #expect(queue.sessions() == [3, 12, 100])
        queue.remove(12)
        queue.remove(12)
        #expect(queue.sessions() == [3, 100])
        #expect(try ReportQueue(dataDirectory: directory).sessions() == [3, 100], "on disk, for the next run")
    }

    @Test func onlySessionsMuevaldStoppedSinceItStartedAreItsToReport() {
        var record = SessionRecord(id: 1, uuid: "u", name: "s", sensors: [], state: .stopped, created: 0, path: "/s.sqlite", events: 0)
        record.stopped = 100
        #expect(AutomaticReports.stoppedHere(record, since: 50))
        #expect(!AutomaticReports.stoppedHere(record, since: 150), "stopped before muevald started")
        record.imports = []
        #expect(!AutomaticReports.stoppedHere(record, since: 50), "an import gets its report on request")
        record.imports = nil
        record.state = .recording
        #expect(!AutomaticReports.stoppedHere(record, since: 50))
    }
}
