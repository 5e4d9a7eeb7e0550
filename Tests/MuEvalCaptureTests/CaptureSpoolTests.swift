import Foundation
@testable import MuEvalCapture
import Testing
import WireProtocol
#if canImport(Zeroconf)
import Zeroconf
#endif

/// The spool on a real file: what a run left is the next run's backlog, once.
@Suite struct CaptureSpoolTests {
    static func directory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("mueval-spool-\(UUID().uuidString)").path
    }

    static func event(_ seq: Int64) -> (seq: Int64, bytes: [UInt8]) {
        (seq, CaptureEvent.custom("e\(seq)").encoded(seq: seq, timestamp: 1_700_000_000))
    }

    @Test func whatWasNotSettledIsTheNextRunsBacklog() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let spool = try CaptureSpool(directory: directory, deviceId: "phone/1")
            #expect(spool.backlog.isEmpty)
            try spool.append((1...5).map(Self.event))
            try spool.forget(through: 3)
        }
        let again = try CaptureSpool(directory: directory, deviceId: "phone/1")
        #expect(again.backlog.map(\.seq) == [4, 5])
        #expect(again.backlog.first?.kind == .event(eventClass: "CustomEvent", sensor: nil))
        #expect(again.backlog.first?.bytes == Self.event(4).bytes)
        #expect(again.highestSeq == 5)
        #expect(FileManager.default.fileExists(atPath: directory + "/phone_1.spool"))
    }

    @Test func aRecordCutShortByADeathIsCutOff() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let spool = try CaptureSpool(directory: directory, deviceId: "d")
            try spool.append((1...2).map(Self.event))
        }
        let path = directory + "/d.spool"
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        try whole.dropLast(7).write(to: URL(fileURLWithPath: path))
        do {
            let again = try CaptureSpool(directory: directory, deviceId: "d")
            #expect(again.backlog.map(\.seq) == [1])
            try again.append([Self.event(3)])
        }
        #expect(try CaptureSpool(directory: directory, deviceId: "d").backlog.map(\.seq) == [1, 3])
    }

    @Test func oneProcessAtATimeRecordsAsADevice() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try CaptureSpool(directory: directory, deviceId: "d")
        let error = #expect(throws: CaptureError.self) { try CaptureSpool(directory: directory, deviceId: "d") }
        #expect(error?.description.contains("another process records as this device") == true)
        _ = first
    }

    @Test func aMostlySettledLargeFileIsRewrittenSmall() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let spool = try CaptureSpool(directory: directory, deviceId: "d")
        let big = [UInt8](repeating: 65, count: 4096)
        let messages = (1...400).map { seq in (seq: Int64(seq), bytes: CaptureEvent.custom("x", ["blob": .data(big)]).encoded(seq: Int64(seq), timestamp: 0)) }
        try spool.append(messages)
        let before = try FileManager.default.attributesOfItem(atPath: spool.path)[.size] as! Int
        try spool.forget(through: 390)
        let after = try FileManager.default.attributesOfItem(atPath: spool.path)[.size] as! Int
        #expect(before > CaptureSpool.compactBytes && after < before / 10)
        // Still appendable and readable, and still locked.
        try spool.append([Self.event(401)])
        #expect(throws: CaptureError.self) { try CaptureSpool(directory: directory, deviceId: "d") }
    }
}

@Suite struct ServerChoiceTests {
    static func server(_ name: String, _ txt: [String: String] = [:], addresses: [String] = ["10.0.0.5"]) -> DiscoveredServer {
        DiscoveredServer(name: name, addresses: addresses, port: 28021, txt: ["protocol": "1", "auth": "none"].merging(txt) { $1 })
    }

    @Test func theOneServerOrTheNamedOne() throws {
        #expect(try ServerDiscovery.choose([Self.server("lab")], name: nil, timeout: 1, hasCredential: false)
                == ServerAddress(host: "10.0.0.5", port: 28021, name: "lab"))
        let both = [Self.server("a"), Self.server("b")]
        #expect(throws: CaptureError.severalServers(["a", "b"])) { try ServerDiscovery.choose(both, name: nil, timeout: 1, hasCredential: false) }
        #expect(try ServerDiscovery.choose(both, name: "b", timeout: 1, hasCredential: false).name == "b")
        #expect(throws: CaptureError.serverNotFound("c", available: ["a", "b"])) { try ServerDiscovery.choose(both, name: "c", timeout: 1, hasCredential: false) }
    }

    @Test func theTXTRecordChooses() throws {
        let servers = [Self.server("token", ["auth": "token", "waiting": "1"]), Self.server("idle", ["waiting": "0"]),
                       Self.server("waiting", ["waiting": "2"])]
        // Without a token the token server is out; a server with a session waiting wins.
        #expect(try ServerDiscovery.choose(servers, name: nil, timeout: 1, hasCredential: false).name == "waiting")
        #expect(throws: CaptureError.self) { try ServerDiscovery.choose(servers, name: nil, timeout: 1, hasCredential: true) }
        #expect(throws: CaptureError.noServerFound(type: ServerDiscovery.serviceType, seconds: 1)) {
            try ServerDiscovery.choose([Self.server("v2", ["protocol": "2"])], name: nil, timeout: 1, hasCredential: true)
        }
    }

    #if canImport(Zeroconf)
    @Test func theLibraryBrowsesForWhatMuevaldAnnounces() {
        #expect(ServerDiscovery.serviceType == ServiceAnnouncement.captureServiceType)
    }
    #endif

    @Test func tlsAsAnnounced() throws {
        let tls = try ServerDiscovery.choose([Self.server("s", ["tls": "1"], addresses: ["fe80::1", "10.0.0.6"])], name: nil, timeout: 1, hasCredential: false)
        #expect(tls == ServerAddress(host: "10.0.0.6", port: 28021, name: "s", tls: true))
        let beside = try ServerDiscovery.choose([Self.server("s", ["tls_port": "28022"])], name: nil, timeout: 1, hasCredential: false, alwaysTLS: true)
        #expect(beside.port == 28022 && beside.tls)
    }
}
