@testable import ConsoleServer
import Foundation
import NIOCore
import Testing

/// What guards the pages a tester's phone opens without a login: the visitor's CSRF token bound to
/// its cookie, the per-address quotas, and the pages' frame.
@Suite struct VisitorTests {
    private static let resources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/ConsoleServer/Resources")

    @Test func aTokenBelongsToOneCookieAndOneProcess() {
        let visitors = ConsoleVisitors()
        let cookie = ConsoleVisitors.newCookie()
        let token = visitors.token(for: cookie)
        #expect(visitors.accepts(token: token, cookie: cookie))
        #expect(!visitors.accepts(token: token, cookie: ConsoleVisitors.newCookie()), "another browser's cookie")
        #expect(!visitors.accepts(token: nil, cookie: cookie))
        #expect(!visitors.accepts(token: token, cookie: nil))
        #expect(!visitors.accepts(token: visitors.token(for: ""), cookie: ""), "no cookie is no visitor")
        #expect(!ConsoleVisitors().accepts(token: token, cookie: cookie), "a restarted daemon's key")
    }

    @Test func anAddressGetsItsQuotaPerWindowThenWaits() {
        var quota = AddressQuota()
        for _ in 0..<3 { #expect(quota.use("192.0.2.1", limit: 3, window: 60, tracked: 10, now: 100) == .allowed) }
        #expect(quota.use("192.0.2.1", limit: 3, window: 60, tracked: 10, now: 130) == .refused(retryAfter: 30))
        #expect(quota.use("192.0.2.2", limit: 3, window: 60, tracked: 10, now: 130) == .allowed, "another address has its own")
        #expect(quota.use("192.0.2.1", limit: 3, window: 60, tracked: 10, now: 160) == .allowed, "a new window")
    }

    @Test func theTableOfAddressesIsBounded() {
        var quota = AddressQuota()
        for index in 0..<5 { _ = quota.use("10.0.0.\(index)", limit: 1, window: 60, tracked: 2, now: Double(index)) }
        // Only the two latest addresses are remembered: the first may try again at once.
        #expect(quota.use("10.0.0.0", limit: 1, window: 60, tracked: 2, now: 5) == .allowed)
        #expect(quota.use("10.0.0.4", limit: 1, window: 60, tracked: 2, now: 5) == .refused(retryAfter: 59))
    }

    @Test func theQuotasRefuseWithAMessageAVisitorCanActOn() {
        let quotas = VisitorQuotas(limits: VisitorLimits(requestsPerMinute: 1, enrolmentsPerHour: 1, withdrawalsPerHour: 1))
        #expect(throws: Never.self) { try quotas.use(.enrolment, by: "192.0.2.9", now: 0) }
        #expect(throws: ConsoleError.tooManyRequests("too many enrolments from your address: try again in 3600 s")) {
            try quotas.use(.enrolment, by: "192.0.2.9", now: 0)
        }
        #expect(throws: Never.self) { try quotas.use(.withdrawal, by: "192.0.2.9", now: 0) }
    }

    @Test func thePagesForPhonesHaveNoNavigationAndCarryTheirToken() throws {
        let assets = try ConsoleAssets(directory: Self.resources)
        for page in [ConsolePage.enrol, ConsolePage.withdraw, ConsolePage.invitation] {
            let html = String(buffer: try #require(assets[page.file]).bytes)
            #expect(!html.contains("<nav"), "\(page.file)")
            #expect(html.contains(#"<meta name="csrf-token" content="\#(ConsoleVisitors.tokenPlaceholder)">"#), "\(page.file)")
            #expect(html.contains(#"<body class="phone">"#), "\(page.file)")
            #expect(!html.contains("{{"), "\(page.file)")
        }
        // The invitation page and the console's questionnaire share one form.
        let invitation = String(buffer: try #require(assets[ConsolePage.invitation.file]).bytes)
        let questionnaire = String(buffer: try #require(assets["questionnaire.html"]).bytes)
        for html in [invitation, questionnaire] {
            #expect(html.components(separatedBy: #"<form id="questionnaire-form""#).count == 2)
        }
        #expect(!questionnaire.contains("csrf-token"), "a console page takes its token from its login")
        #expect(ConsoleVisitors.isPublic("/i/abc") && ConsoleVisitors.isPublic("/api/public/withdraw") && !ConsoleVisitors.isPublic("/api/pool"))
    }
}
