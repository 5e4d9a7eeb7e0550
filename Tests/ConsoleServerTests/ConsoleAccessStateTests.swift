@testable import ConsoleServer
import SessionModel
import Testing

/// The console's access rules as a value: no sockets, no clock but the one passed in.
@Suite struct ConsoleAccessStateTests {
    let limits = ConsoleAccessLimits(loginCodeSeconds: 60, sessionSeconds: 3600, maxSessions: 2)

    @Test func aCodeLogsInOnceAndTheLoginLastsItsTime() {
        var state = ConsoleAccessState(limits: limits)
        #expect(state.issue(code: "c1", now: 100) == 160)
        guard case .loggedIn(let login) = state.redeem(code: "c1", sessionID: "s1", csrfToken: "t1", now: 110) else {
            Issue.record("a fresh code was refused")
            return
        }
        #expect(login == ConsoleLogin(id: "s1", csrfToken: "t1", expires: 3710))
        #expect(state.redeem(code: "c1", sessionID: "s2", csrfToken: "t2", now: 111) == .refused)
        #expect(state.login("s1", now: 3709) == login)
        #expect(state.login("s1", now: 3710) == nil)
        #expect(state.login("s2", now: 111) == nil)
    }

    @Test func anExpiredOrUnknownCodeIsRefused() {
        var state = ConsoleAccessState(limits: limits)
        _ = state.issue(code: "c1", now: 100)
        #expect(state.redeem(code: "c1", sessionID: "s1", csrfToken: "t", now: 160) == .refused)
        #expect(state.redeem(code: "never-issued", sessionID: "s1", csrfToken: "t", now: 100) == .refused)
        #expect(state.redeem(code: "", sessionID: "s1", csrfToken: "t", now: 100) == .refused)
    }

    @Test func theOldestLoginMakesRoomBeyondTheLimit() {
        var state = ConsoleAccessState(limits: limits)
        for (index, code) in ["a", "b", "c"].enumerated() {
            _ = state.issue(code: code, now: Double(index))
            _ = state.redeem(code: code, sessionID: "s" + code, csrfToken: "t", now: Double(index))
        }
        #expect(state.login("sa", now: 3) == nil)
        #expect(state.login("sb", now: 3) != nil)
        #expect(state.login("sc", now: 3) != nil)
    }

    @Test func logoutEndsTheLogin() {
        var state = ConsoleAccessState(limits: limits)
        _ = state.issue(code: "c", now: 0)
        _ = state.redeem(code: "c", sessionID: "s", csrfToken: "t", now: 0)
        state.logout("s")
        #expect(state.login("s", now: 1) == nil)
    }

    @Test func tokensAreLongRandomHex() {
        let a = ConsoleAccess.randomToken(), b = ConsoleAccess.randomToken()
        #expect(a.count == 64 && b.count == 64 && a != b)
        #expect(a.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(constantTimeEqual(a, a))
        #expect(!constantTimeEqual(a, b))
        #expect(!constantTimeEqual(a, String(a.dropLast())))
    }
}
