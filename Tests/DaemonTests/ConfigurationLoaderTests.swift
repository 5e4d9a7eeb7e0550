import CaptureServer
@testable import Daemon
import Foundation
import JournalStorage
import WireProtocol
import XCTest

final class ConfigurationLoaderTests: XCTestCase {
    private func file(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("muevald-\(UUID().uuidString).toml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    func testTheShippedConfigFileIsValidAndEqualsTheDefaults() throws {
        let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../config/muevald.toml").path
        let loaded = try ConfigurationLoader(environment: [:]).load(file: shipped, flags: [:])
        let defaults = DaemonConfiguration()
        XCTAssertEqual(loaded.capture.port, defaults.capture.port)
        XCTAssertEqual(loaded.capture.wireLimits, defaults.capture.wireLimits)
        XCTAssertEqual(loaded.dataDirectory, defaults.dataDirectory)
    }

    func testEveryOptionIsDocumentedInTheShippedConfigFile() throws {
        let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../config/muevald.toml").path
        let text = try String(contentsOfFile: shipped, encoding: .utf8)
        for option in ConfigurationOption.all {
            let parts = option.key.split(separator: ".")
            XCTAssertTrue(text.contains("[\(parts.dropLast().joined(separator: "."))]"), "section of \(option.key)")
            XCTAssertTrue(text.contains("#\(parts.last!) = "), "\(option.key) is not documented in config/muevald.toml")
        }
    }

    func testFlagBeatsEnvironmentBeatsFileBeatsDefault() throws {
        let path = try file("""
            [server]
            listen = "127.0.0.1:1000"
            max_connections = 10
            idle_timeout = 5
            [log]
            level = "debug"
            """)
        let environment = ["MUEVAL_SERVER_LISTEN": "127.0.0.1:2000", "MUEVAL_SERVER_MAX_CONNECTIONS": "20"]
        let configuration = try ConfigurationLoader(environment: environment)
            .load(file: path, flags: ["server.listen": "[::1]:3000"])
        XCTAssertEqual(configuration.capture.host, "::1")
        XCTAssertEqual(configuration.capture.port, 3000)
        XCTAssertEqual(configuration.capture.maxConnections, 20)
        XCTAssertEqual(configuration.capture.idleTimeout, 5)
        XCTAssertEqual(configuration.logLevel, .debug)
        XCTAssertEqual(configuration.capture.maxConnectionsPerAddress, CaptureConfiguration().maxConnectionsPerAddress)
    }

    func testMuevalSocketSetsTheControlSocketLikeForMuevalctl() throws {
        let configuration = try ConfigurationLoader(environment: ["MUEVAL_SOCKET": "/tmp/x.sock"]).load(file: nil, flags: [:])
        XCTAssertEqual(configuration.controlSocket, "/tmp/x.sock")
    }

    func testUnknownKeyNamesTheFileAndTheKey() throws {
        let path = try file("[server]\nlisten = \":1\"\nmax_conections = 3\n")
        XCTAssertThrowsError(try ConfigurationLoader(environment: [:]).load(file: path, flags: [:])) { error in
            XCTAssertTrue("\(error)".contains(path), "\(error)")
            XCTAssertTrue("\(error)".contains("unknown setting server.max_conections"), "\(error)")
        }
    }

    func testInvalidValuesSayWhatIsAllowed() throws {
        let path = try file("[server]\nunknown_device_policy = \"maybe\"\n")
        XCTAssertThrowsError(try ConfigurationLoader(environment: [:]).load(file: path, flags: [:])) { error in
            XCTAssertTrue("\(error)".contains("one of \"reject\", \"auto\""), "\(error)")
        }
        let wrongType = try file("[limits]\nmax_message_bytes = \"big\"\n")
        XCTAssertThrowsError(try ConfigurationLoader(environment: [:]).load(file: wrongType, flags: [:])) { error in
            XCTAssertTrue("\(error)".contains("limits.max_message_bytes must be an integer"), "\(error)")
        }
        XCTAssertThrowsError(try ConfigurationLoader(environment: [:]).load(file: nil, flags: ["server.listen": "localhost"])) { error in
            XCTAssertTrue("\(error)".contains("HOST:PORT"), "\(error)")
        }
        // A frame bound NIO's decoder would trap on (above UInt32.max) is refused when read, not at the first upgrade.
        let hugeFrames = try file("[capture]\nweb_max_frame_bytes = 10000000000000\n")
        XCTAssertThrowsError(try ConfigurationLoader(environment: [:]).load(file: hugeFrames, flags: [:])) { error in
            XCTAssertTrue("\(error)".contains("capture.web_max_frame_bytes"), "\(error)")
        }
        // SQLite multiplies the page cache by 1,024 in 64 bits: a size that would overflow there is refused.
        XCTAssertThrowsError(try ConfigurationLoader(environment: [:]).load(file: nil, flags: ["storage.cache_kib": "9000000000000000000"])) { error in
            XCTAssertTrue("\(error)".contains("storage.cache_kib"), "\(error)")
        }
        XCTAssertEqual(try ConfigurationLoader(environment: [:]).load(file: nil, flags: ["storage.cache_kib": "4194304"]).capture.journal.cacheKiB, 4_194_304)
        XCTAssertThrowsError(try ConfigurationLoader(environment: [:]).load(file: nil, flags: ["capture.web_origins": "https://app.example/path"])) { error in
            XCTAssertTrue("\(error)".contains("capture.web_origins"), "\(error)")
        }
    }

    /// docs/PROTOCOL.md, "Value ranges": the window and bounds are the decoder's, and a window that ends before it starts is refused.
    func testValueRangesAreConfigurable() throws {
        let path = try file("""
            [limits]
            earliest_timestamp = "2020-01-01T00:00:00Z"
            latest_timestamp = "2030-01-01T00:00:00Z"
            max_coordinate = 5000
            max_duration = 3600
            max_media_part = 100
            """)
        let ranges = try ConfigurationLoader(environment: [:]).load(file: path, flags: [:]).capture.wireLimits.valueRanges
        XCTAssertEqual(ranges, ValueRanges(times: 1_577_836_800...1_893_456_000, maxCoordinate: 5000, maxDuration: 3600, maxMediaPart: 100))
        let backwards = try file("[limits]\nlatest_timestamp = \"1969-01-01T00:00:00Z\"\n")
        XCTAssertThrowsError(try ConfigurationLoader(environment: [:]).load(file: backwards, flags: [:])) { error in
            XCTAssertTrue("\(error)".contains("limits.latest_timestamp"), "\(error)")
        }
    }

    func testSyntaxErrorsNameTheLine() throws {
        let path = try file("[server]\nlisten = \n")
        XCTAssertThrowsError(try ConfigurationLoader(environment: [:]).load(file: path, flags: [:])) { error in
            XCTAssertTrue("\(error)".contains("\(path):2"), "\(error)")
        }
    }

    /// `--check-config` prints TOML that muevald reads back, whatever the values hold.
    func testTheRenderedConfigurationReadsBackWithAwkwardStrings() throws {
        var configuration = DaemonConfiguration()
        configuration.zeroconf.name = "Lab \"A\"\nsecond line\twith a tab and a \\ backslash \u{7}"
        configuration.zeroconf.extraTypes = ["_mueval._tcp", "_muevalx._tcp"]
        configuration.capture.deviceToken = "tok'en\u{2028}"
        configuration.capture.idleTimeout = 12.5
        configuration.zeroconf.enabled = false
        let loaded = try ConfigurationLoader(environment: [:]).load(file: try file(configuration.rendered), flags: [:])
        XCTAssertEqual(loaded.zeroconf.name, configuration.zeroconf.name)
        XCTAssertEqual(loaded.zeroconf.extraTypes, configuration.zeroconf.extraTypes)
        XCTAssertEqual(loaded.capture.deviceToken, configuration.capture.deviceToken)
        XCTAssertEqual(loaded.capture.idleTimeout, 12.5)
        XCTAssertFalse(loaded.zeroconf.enabled)
        for option in ConfigurationOption.all {
            XCTAssertEqual(option.current(loaded), option.current(configuration), option.key)
        }
    }
}
