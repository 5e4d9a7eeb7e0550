@testable import CaptureServer
@testable import SessionCore
import Foundation
import JournalStorage
import Logging
import MuEvalWire
import Testing
import WireProtocol
import SessionModel
import GroupCommit

/// A real catalog and registry in a temporary directory, removed on `cleanUp()`.
final class TemporaryRegistry: Sendable {
    let directory: String
    let registry: SessionRegistry
    let counters = CaptureCounters()
    let connections = ConnectionTable()
    /// A budget no test reaches unless it says so.
    let ledger = ConnectionLedger(budget: DescriptorBudget(limit: 1 << 20, reserve: 0, capture: 4096, console: 0))
    let tail = LiveTail()

    init(policy: UnknownDevicePolicy = .reject) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-capture-\(UUID().uuidString.prefix(8))").path
        let catalog = try Catalog(directory: directory)
        // The daemon's own wiring: commits reach the connections as acks through the router.
        let router = CommitRouter(connections: connections, counters: counters, tail: tail, health: StorageHealth(),
                                  logger: Logger(label: "test"))
        registry = SessionRegistry(catalog: catalog, policy: policy, journalLimits: JournalWriterLimits(), counters: counters,
                                   tail: tail, logger: Logger(label: "test")) { session, report in
            router.route(report, of: session)
        }
    }

    /// A session started the way `muevalctl start` does, open for any device.
    func start(_ name: String, device: String? = nil, sensors: [String] = []) async throws -> EvaluationSession {
        let record = try await registry.start(name: name, testUser: nil, notes: nil, sensors: sensors, device: device,
                                              now: Date().timeIntervalSince1970)
        return try #require(registry.openSessions().first { $0.id == record.id })
    }

    func cleanUp() async {
        await registry.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A test that throws before its `cleanUp()` still leaves nothing in /tmp (32 directories had piled up).
    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// An event with a seq, as a capture library sends it.
func eventXML(seq: Int64, eventClass: String = "UserInputEvent") -> String {
    "<event><key>class</key><string>\(eventClass)</string><key>seq</key><integer>\(seq)</integer><key>x</key><integer>1</integer></event>\n"
}

/// The server's replies in `bytes`.
func replies(_ bytes: [UInt8]) -> [WireMessage] {
    var decoder = WireDecoder()
    decoder.append(bytes)
    var messages: [WireMessage] = []
    while let next = decoder.next() {
        if case .success(let message) = next { messages.append(message) }
    }
    return messages
}

/// Polls until `condition` holds, for at most `timeout` seconds.
func waitUntil(_ timeout: Double = 30, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    // The condition is asked once more after each sleep, however late a busy test pool ends it.
    while true {
        if try await condition() { return true }
        guard Date() < deadline else { return false }
        try await Task.sleep(for: .milliseconds(10))
    }
}
