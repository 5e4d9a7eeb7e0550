import DaemonTestSupport
import Foundation
import XCTest

/// muevalctl runs that a test expects to succeed or to fail, with the command in the failure message.
extension TestDaemon {
    /// Standard output of a run that must succeed.
    func ok(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let run = try muevalctl(arguments)
        XCTAssertEqual(run.status, 0, "muevalctl \(arguments.joined(separator: " ")): \(run.stderr)", file: file, line: line)
        return run.stdout
    }

    /// The error of a run that must fail: one line on stderr, a non-zero status, nothing on stdout.
    func refused(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let run = try muevalctl(arguments)
        XCTAssertNotEqual(run.status, 0, "muevalctl \(arguments.joined(separator: " ")) should fail: \(run.stdout)", file: file, line: line)
        XCTAssertEqual(run.stdout, "", file: file, line: line)
        XCTAssertEqual(run.stderr.trimmingCharacters(in: .newlines).split(separator: "\n").count, 1, run.stderr, file: file, line: line)
        return run.stderr
    }

    /// A `--json` run's output, decoded.
    func json<T: Decodable>(_ type: T.Type, _ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> T {
        try JSONDecoder().decode(type, from: Data(try ok(["--json"] + arguments, file: file, line: line).utf8))
    }
}
