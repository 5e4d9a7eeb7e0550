@testable import ConsoleServer
import Foundation
import HTTPTypes
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

    @Test func anIPv6SiteSharesItsQuotaTimesTheNetworkFactor() {
        let quotas = VisitorQuotas(limits: VisitorLimits(enrolmentsPerHour: 1, networkFactor: 3))
        // Each host of 2001:db8:5::/48 in a /64 of its own: one enrolment each, three for the site.
        for host in 0..<3 {
            #expect(throws: Never.self) { try quotas.use(.enrolment, by: "2001:db8:5:\(host)::1", now: 0) }
        }
        #expect(throws: ConsoleError.self) { try quotas.use(.enrolment, by: "2001:db8:5:99::1", now: 0) }
        #expect(throws: Never.self) { try quotas.use(.enrolment, by: "2001:db8:6::1", now: 0) }
    }

    /// Issue 38: behind a reverse proxy every tester had the proxy's address.
    @Test func aTrustedProxyNamesTheClientAndNobodyElseCan() {
        let proxies = ConsoleProxies(["10.0.0.0/8", "fd00::1"])
        func client(_ peer: String, _ fields: [(String, String)]) -> String {
            var headers = HTTPFields()
            for (name, value) in fields { headers.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
            return proxies.client(peer: peer, headers: headers)
        }
        #expect(client("10.1.2.3", [("X-Forwarded-For", "192.0.2.7")]) == "192.0.2.7")
        #expect(client("10.1.2.3", [("X-Forwarded-For", "203.0.113.1, 192.0.2.7, 10.9.9.9")]) == "192.0.2.7",
                "the right-most address that is no trusted proxy: what the client wrote left of it may be forged")
        #expect(client("192.0.2.50", [("X-Forwarded-For", "192.0.2.7")]) == "192.0.2.50", "not a trusted proxy: its headers are not believed")
        #expect(client("10.1.2.3", [("Forwarded", #"for=192.0.2.60;proto=https, For="[2001:db8:cafe::17]:4711""#),
                                    ("X-Forwarded-For", "192.0.2.7")]) == "2001:db8:cafe::17", "Forwarded before X-Forwarded-For")
        #expect(client("10.1.2.3", [("Forwarded", "for=\"192.0.2.43:47011\"")]) == "192.0.2.43")
        #expect(client("10.1.2.3", [("Forwarded", "for=unknown")]) == "10.1.2.3", "an unknown client: the proxy stands for it")
        #expect(client("10.1.2.3", []) == "10.1.2.3")
        #expect(client("fd00::1", [("X-Forwarded-For", "10.2.2.2, garbage")]) == "fd00::1")
        #expect(client("10.1.2.3", [("X-Forwarded-For", "10.4.4.4")]) == "10.4.4.4", "only proxies: the left-most of them")
        #expect(ConsoleProxies([]).client(peer: "10.1.2.3", headers: [HTTPField.Name("X-Forwarded-For")!: "192.0.2.7"]) == "10.1.2.3")
        // The fuzzer's find (Fuzz/corpus/visitor/proxies-control-bytes): control bytes, which HTTPField stores as
        // spaces, after an IPv4 address and a `%` counted the header's text as the client.
        #expect(client("10.1.2.3", [("X-Forwarded-For", "203.0.0.1, 192.0.2.9%\u{1}\u{1}0 03.")]) == "10.1.2.3",
                "an IPv4 address has no zone: the hop names no address")
        #expect(client("10.1.2.3", [("X-Forwarded-For", "2001:DB8:0::7, ::ffff:10.9.9.9")]) == "2001:db8::7",
                "the client in canonical form, never the header's text")
        #expect(client("10.1.2.3", [("X-Forwarded-For", "fe80::1%eth0")]) == "fe80::1")
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
    }
}
