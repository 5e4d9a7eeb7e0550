@testable import Daemon
import Foundation
import XCTest

/// `muevald --configuration-reference`, from which packaging/man/muevald-toml.py writes muevald.toml(5).
final class ConfigurationReferenceTests: XCTestCase {
    private struct Setting: Decodable, Equatable {
        let key: String
        let type: String
        let allowed: String
        let defaultValue: String
        let reloadable: Bool
        let environment: [String]
    }

    func testEverySettingOfTheTableWithItsDefaultVariablesAndReload() throws {
        var defaults = DaemonConfiguration()
        defaults.logLevel = .notice
        let settings = try JSONDecoder().decode([Setting].self, from: ConfigurationReference.json(defaults: defaults))
        XCTAssertEqual(settings.map(\.key), ConfigurationOption.all.map(\.key))
        let byKey = Dictionary(uniqueKeysWithValues: settings.map { ($0.key, $0) })
        XCTAssertEqual(byKey["log.level"], Setting(key: "log.level", type: "string",
                                                   allowed: #"one of "trace", "debug", "info", "notice", "warning", "error", "critical""#,
                                                   defaultValue: "notice", reloadable: true, environment: ["MUEVAL_LOG_LEVEL"]))
        XCTAssertEqual(byKey["control.socket"]?.environment, ["MUEVAL_CONTROL_SOCKET", "MUEVAL_SOCKET"])
        XCTAssertEqual(byKey["server.listen"]?.defaultValue, "0.0.0.0:28021")
        XCTAssertEqual(byKey["server.listen"]?.reloadable, false)
        XCTAssertEqual(byKey["zeroconf.types"]?.type, "list")
        XCTAssertEqual(byKey["storage.max_pending_bytes"]?.type, "integer")
    }
}
