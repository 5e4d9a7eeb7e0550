import ArgumentParser
import DaemonTestSupport
import Foundation
import Testing
@testable import muevalctl

/// `muevalctl --socket PATH status`: global options before the command, where systemctl, kubectl and
/// `git -C` users type them.
struct GlobalArgumentOrderTests {
    let order = GlobalArgumentOrder(root: MuEvalCtl.self)

    @Test(arguments: [
        (["--socket", "/s", "status"], ["status", "--socket", "/s"]),
        (["--socket=/s", "status"], ["status", "--socket=/s"]),
        (["--json", "sessions"], ["sessions", "--json"]),
        (["--json", "--socket", "/s", "tail", "demo", "--since", "3"], ["tail", "--json", "--socket", "/s", "demo", "--since", "3"]),
        (["--json", "report-config", "list"], ["report-config", "list", "--json"]),
        (["report-config", "--socket", "/s", "save", "lab"], ["report-config", "save", "--socket", "/s", "lab"]),
        (["--json", "discover", "--timeout", "1"], ["discover", "--json", "--timeout", "1"]),
    ])
    func leadingGlobalOptionsFollowTheCommand(arguments: [String], expected: [String]) {
        #expect(order.normalise(arguments) == expected)
    }

    @Test(arguments: [
        ["status", "--socket", "/s"],
        ["sessions", "--json"],
        // What follows the command keeps its place, even a word that names a command.
        ["tail", "stop", "--json"],
        ["events", "--json", "report"],
        // Nothing to attach them to: ArgumentParser says what is missing.
        ["--socket"],
        ["--json"],
        ["--help"],
        ["--generate-completion-script", "bash"],
        [],
    ])
    func everythingElseIsLeftAlone(arguments: [String]) {
        #expect(order.normalise(arguments) == arguments)
    }

    @Test func aSocketPathThatNamesACommandIsStillThePath() {
        #expect(order.normalise(["--socket", "status", "sessions"]) == ["sessions", "--socket", "status"])
    }

    /// What the normaliser gives, ArgumentParser parses, for every command (one without the options would
    /// be refused with "Unknown option").
    @Test func everyCommandTakesTheGlobalOptionsFirst() throws {
        let commands: [[String]] = [["start"], ["stop", "--all"], ["status"], ["top"], ["sessions"], ["devices"], ["events", "s"],
                                    ["tail"], ["note", "s", "text"], ["export", "s"], ["delete", "s"], ["discover"], ["report", "s"],
                                    ["report-config", "save", "n"], ["report-config", "list"], ["report-config", "show", "n"]]
        for command in commands {
            #expect(throws: Never.self, "\(command)") {
                _ = try MuEvalCtl.parseAsRoot(order.normalise(["--json", "--socket", "/tmp/x.sock"] + command))
            }
        }
        let status = try #require(try MuEvalCtl.parseAsRoot(order.normalise(["--socket=/tmp/x.sock", "--json", "status"])) as? Status)
        #expect(status.global.socket == "/tmp/x.sock" && status.global.json)
        let list = try #require(try MuEvalCtl.parseAsRoot(order.normalise(["--json", "report-config", "list"])) as? ReportConfig.List)
        #expect(list.global.json && list.global.socket == nil)
        // Given twice (before and after), the flag is still just on.
        let twice = try #require(try MuEvalCtl.parseAsRoot(order.normalise(["--json", "sessions", "--json"])) as? Sessions)
        #expect(twice.global.json)
    }
}
