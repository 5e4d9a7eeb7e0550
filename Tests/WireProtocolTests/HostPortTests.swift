import MuEvalWire
import WireProtocol
import XCTest

/// The one `HOST:PORT` reader of muevald's `server.listen` and muevalsim's `--connect`.
final class HostPortTests: XCTestCase {
    func testHostPortForms() {
        XCTAssertEqual(HostPort(parsing: "127.0.0.1:28021").map { [$0.host, String($0.port)] }, ["127.0.0.1", "28021"])
        XCTAssertEqual(HostPort(parsing: "[::1]:28021").map { [$0.host, String($0.port)] }, ["::1", "28021"])
        XCTAssertEqual(HostPort(parsing: ":0").map { [$0.host, String($0.port)] }, ["", "0"])
        for bad in ["127.0.0.1", "host:", "host:65536", "host:-1", "[::1]28021", "[::1]", "host:port"] {
            XCTAssertNil(HostPort(parsing: bad), bad)
        }
    }
}
