import DaemonTestSupport
import Foundation
import Logging
import XCTest
@testable import Zeroconf
import ZeroconfBrowsing

/// The Zeroconf module in this process, against a real avahi-daemon: the lab host's avahi-daemon
/// runs in a network namespace of the test's own, and this process reaches it through that host's
/// D-Bus socket (a file, which namespaces do not hide). Publisher and browser use the same daemon,
/// which reports its own services to its own browsers: no packet leaves the namespace.
///
/// One lab for the whole class: libdbus reads the system bus's address once per process, so this
/// process must not have used D-Bus before, and keeps the lab's bus until it ends.
final class PublisherTests: XCTestCase {
    nonisolated(unsafe) private static var sharedLab: NetworkLab?
    nonisolated(unsafe) private static var unavailable: String?
    nonisolated(unsafe) private static var labError: String?
    private var lab: NetworkLab { Self.sharedLab! }

    override class func setUp() {
        if let reason = NetworkLab.unavailableReason {
            print("⚠️  SKIPPING ZEROCONF UNIT TESTS: \(reason)")
            unavailable = reason
            return
        }
        do {
            sharedLab = try NetworkLab.create()
            setenv("DBUS_SYSTEM_BUS_ADDRESS", sharedLab!.lab.busAddress, 1)
        } catch {
            labError = "cannot make the network lab: \(error)"
        }
    }

    override class func tearDown() {
        sharedLab?.cleanUp()
        sharedLab = nil
    }

    override func setUpWithError() throws {
        if let reason = Self.unavailable { throw XCTSkip("Zeroconf tests need network namespaces: \(reason)") }
        if let error = Self.labError { throw LabFailure(description: error) }
    }

    private func announcement(_ name: String, txt: [(key: String, value: String)] = [("state", "idle")]) -> ServiceAnnouncement {
        ServiceAnnouncement(name: name, types: [ServiceAnnouncement.captureServiceType], port: 28021, txt: txt)
    }

    private func waitFor(_ publisher: ZeroconfPublisher, _ what: String, timeout: Double = 10,
                         _ condition: (AnnouncementState) -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition(publisher.state) {
            guard Date() < deadline else { return XCTFail("\(what): still \(publisher.state)") }
            try await Task.sleep(for: .milliseconds(25))
        }
    }

    private func browse(until condition: ([DiscoveredService]) -> Bool) async throws -> [DiscoveredService] {
        let deadline = Date().addingTimeInterval(10)
        var found: [DiscoveredService] = []
        while Date() < deadline {
            found = try await ZeroconfBrowser.browse(type: ServiceAnnouncement.captureServiceType, timeout: 1)
            if condition(found) { break }
        }
        return found
    }

    /// Started before avahi-daemon: it waits, announces once the daemon is there, follows TXT changes, and withdraws.
    func testWaitsForAvahiThenAnnouncesUpdatesAndWithdraws() async throws {
        let publisher = try ZeroconfPublisher(announcement: announcement("muEval unit"), hostPortHint: "lab:28021", logger: Logger(label: "test"))
        try publisher.start()
        try await waitFor(publisher, "waiting for avahi-daemon") { $0 == .waitingForAvahi }

        try lab.startAvahi(on: lab.lab)
        try await waitFor(publisher, "announced") { $0 == .announced(name: "muEval unit") }
        var found = try await browse { $0.contains { $0.name == "muEval unit" } }
        XCTAssertEqual(found.first { $0.name == "muEval unit" }?.txt, ["state": "idle"])

        publisher.update(txt: [("state", "recording"), ("waiting", "0")])
        found = try await browse { $0.first { $0.name == "muEval unit" }?.txt["state"] == "recording" }
        XCTAssertEqual(found.first { $0.name == "muEval unit" }?.txt, ["state": "recording", "waiting": "0"])

        publisher.stop()
        XCTAssertEqual(publisher.state, .withdrawn)
        found = try await browse { !$0.contains { $0.name == "muEval unit" } }
        XCTAssertFalse(found.contains { $0.name == "muEval unit" }, "withdrawn: \(found)")
    }

    func testStatesReadAsStatusShowsThem() {
        XCTAssertEqual(AnnouncementState.waitingForAvahi.description, "waiting for avahi-daemon")
        XCTAssertEqual(AnnouncementState.announced(name: "muEval on lab").description, "announced as \"muEval on lab\"")
        XCTAssertNil(AnnouncementState.registering(name: "x").announcedName)
    }
}

private struct LabFailure: Error, CustomStringConvertible {
    var description: String
}
