import DaemonTestSupport
import Foundation
import BuildInfo
import Testing

/// `--version` on every program, where a bug report starts: muEval's version (the one `status` shows) and the
/// commit the binary was built from, which this checkout's git knows.
struct VersionTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    @Test(arguments: ["muevald", "muevalctl", "muevalsim"])
    func namesTheProgramTheVersionAndTheCommit(program: String) throws {
        let result = try runProcess(TestDaemon.executable(program), ["--version"], timeout: 30)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        let line = result.stdout.trimmingCharacters(in: .newlines)
        let isCheckout = try runProcess("/usr/bin/env", ["git", "-C", Self.repository, "rev-parse", "HEAD"]).status == 0
        guard isCheckout else {
            // Built from a tree without git (a tarball): the version alone.
            #expect(line == "\(program) \(MuEvalVersion.current)")
            return
        }
        let prefix = "\(program) \(MuEvalVersion.current) (commit "
        #expect(line.hasPrefix(prefix) && line.hasSuffix(")"), "\(line)")
        let commit = line.dropFirst(prefix.count).dropLast().replacingOccurrences(of: "-modified", with: "")
        #expect(commit.count == 12 && commit.allSatisfy(\.isHexDigit), "\(line)")
        #expect(try runProcess("/usr/bin/env", ["git", "-C", Self.repository, "cat-file", "-e", commit + "^{commit}"]).status == 0,
                "\(commit) is not a commit of this checkout")
    }
}
