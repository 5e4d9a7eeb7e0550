@testable import ConsoleServer
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import SessionCore
import SessionModel
import Testing

/// Web devices' upgrades at the console's door: which requests `WebDeviceDoor` decides (an upgrade at `/capture`
/// only), in which order (the host, then the origin and the address's caps), and what `WebDeviceGate` does with
/// each decision on a channel: a refusal answered with its status, `Retry-After` and reason line, then closed;
/// anything else passed on untouched, with the gate gone.
@Suite struct WebDeviceGateTests {
    /// What the capture endpoint was asked: the admitted addresses, released ones removed.
    private final class Endpoint: Sendable {
        let refusal: NIOLockedValueBox<Refusal?>
        let admitted = NIOLockedValueBox<[String]>([])
        let asked = NIOLockedValueBox<[String?]>([])

        init(refusing refusal: Refusal? = nil) {
            self.refusal = NIOLockedValueBox(refusal)
        }

        var web: ConsoleWebCapture {
            ConsoleWebCapture(path: "/capture", libraryPath: "/capture.js", modulesPath: "/capture/", library: [:], libraryHeaders: [],
                              maxFrameBytes: 1 << 20,
                              admit: { origin, _, address in
                                  self.asked.withLockedValue { $0.append(origin) }
                                  if let refusal = self.refusal.withLockedValue({ $0 }) { return refusal }
                                  self.admitted.withLockedValue { $0.append(address) }
                                  return nil
                              },
                              release: { address in self.admitted.withLockedValue { $0.removeAll { $0 == address } } },
                              handOff: { _, _ in })
        }
    }

    private func door(_ endpoint: Endpoint, refusals: Refusals = Refusals(), proxies: [String] = []) -> WebDeviceDoor {
        WebDeviceDoor(web: endpoint.web, hosts: ConsoleHosts(settings: ConsoleSettings()), proxies: ConsoleProxies(proxies),
                      refusals: refusals, logger: Logger(label: "test"))
    }

    private func head(_ uri: String = "/capture", host: String = "127.0.0.1:28080", origin: String? = "https://app.example",
                      upgrade: Bool = true, forwardedFor: String? = nil) -> HTTPRequestHead {
        var headers = HTTPHeaders([("Host", host)])
        if upgrade { headers.add(contentsOf: [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Version", "13")]) }
        if let origin { headers.add(name: "Origin", value: origin) }
        if let forwardedFor { headers.add(name: "X-Forwarded-For", value: forwardedFor) }
        return HTTPRequestHead(version: .http1_1, method: .GET, uri: uri, headers: headers)
    }

    @Test func onlyAnUpgradeAtCaptureIsTheDoorsToDecide() {
        let endpoint = Endpoint(refusing: Refusal(.webRate, "no"))
        let door = door(endpoint)
        #expect(door.decide(head("/capture.js", upgrade: false), peer: "10.0.0.7") == .pass)
        #expect(door.decide(head("/capture", upgrade: false), peer: "10.0.0.7") == .pass, "no upgrade: the router's 404 or 426")
        #expect(door.decide(head("/api/updates"), peer: "10.0.0.7") == .pass, "the console's own WebSockets")
        #expect(endpoint.asked.withLockedValue { $0 }.isEmpty)
    }

    @Test func aWebDeviceIsAdmittedByTheAddressTheLimitsCount() {
        let endpoint = Endpoint()
        #expect(door(endpoint).decide(head("/capture?x=1"), peer: "10.0.0.7") == .admitted(address: "10.0.0.7"))
        // Behind a trusted proxy the phone is the address it names.
        let proxied = door(endpoint, proxies: ["10.0.0.1"])
        #expect(proxied.decide(head(forwardedFor: "192.0.2.44"), peer: "10.0.0.1") == .admitted(address: "192.0.2.44"))
        #expect(endpoint.asked.withLockedValue { $0 } == ["https://app.example", "https://app.example"])
    }

    @Test func aForeignHostIsRefusedBeforeTheOriginAndTheCapsAreAskedAndEveryRefusalIsCounted() {
        let refusals = Refusals()
        let endpoint = Endpoint()
        guard case .refused(let refusal) = door(endpoint, refusals: refusals).decide(head(host: "evil.example"), peer: "10.0.0.7") else {
            Issue.record("a foreign Host is refused")
            return
        }
        #expect(refusal.reason == .host && refusal.reason.httpStatus == 421)
        #expect(endpoint.asked.withLockedValue { $0 }.isEmpty)
        endpoint.refusal.withLockedValue { $0 = Refusal(.origin, "pages from https://elsewhere.example may not capture here: add it to capture.web_origins") }
        #expect(door(endpoint, refusals: refusals).decide(head(origin: "https://elsewhere.example"), peer: "10.0.0.7")
                    == .refused(Refusal(.origin, "pages from https://elsewhere.example may not capture here: add it to capture.web_origins")))
        #expect(refusals.counts()["host"] == 1)
        #expect(refusals.counts()["origin"] == 1)
    }

    /// A channel with the gate alone, connected from `peer`; `answered` completes as the gate decides.
    private func gate(_ decision: WebDeviceDoor.Decision, released: NIOLockedValueBox<[String]>) throws -> (EmbeddedChannel, EventLoopFuture<Bool>) {
        let channel = EmbeddedChannel()
        let answered = channel.eventLoop.makePromise(of: Bool.self)
        try channel.pipeline.syncOperations.addHandler(WebDeviceGate(decide: { _, _ in decision }, release: { address in released.withLockedValue { $0.append(address) } },
                                                                     answered: answered), name: "gate")
        try channel.connect(to: SocketAddress(ipAddress: "10.0.0.7", port: 40000)).wait()
        return (channel, answered.futureResult)
    }

    @Test func aRefusedUpgradeIsAnsweredWithItsStatusRetryAfterAndOneLineThenClosed() throws {
        let released = NIOLockedValueBox<[String]>([])
        let refusal = Refusal(.webPerAddress, "400 web devices are connected from 10.0.0.7 already, the most one address may have (capture.web_max_per_address): try again in 30 s",
                              retryAfter: 30)
        let (channel, answered) = try gate(.refused(refusal), released: released)
        try channel.writeInbound(HTTPServerRequestPart.head(head()))
        try channel.writeInbound(HTTPServerRequestPart.end(nil))
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) == nil, "the refused request goes no further")
        guard case .head(let response) = try channel.readOutbound(as: HTTPServerResponsePart.self),
              case .body(.byteBuffer(let body)) = try channel.readOutbound(as: HTTPServerResponsePart.self),
              case .end = try channel.readOutbound(as: HTTPServerResponsePart.self) else {
            Issue.record("a response: head, body, end")
            return
        }
        #expect(response.status == .tooManyRequests)
        #expect(response.headers["Retry-After"] == ["30"])
        #expect(response.headers["Content-Type"] == ["text/plain; charset=utf-8"])
        #expect(response.headers["Connection"] == ["close"])
        #expect(String(buffer: body) == refusal.message + "\n")
        #expect(response.headers["Content-Length"] == [String(body.readableBytes)])
        #expect(try answered.wait() == true)
        #expect(!channel.isActive, "closed once answered")
        #expect(released.withLockedValue { $0 }.isEmpty, "nothing was admitted")
    }

    @Test func anOriginRefusalHasNoRetryAfter() throws {
        let (channel, answered) = try gate(.refused(Refusal(.origin, "pages from https://x.example may not capture here: add it to capture.web_origins")),
                                           released: NIOLockedValueBox([]))
        try channel.writeInbound(HTTPServerRequestPart.head(head()))
        guard case .head(let response) = try channel.readOutbound(as: HTTPServerResponsePart.self) else {
            Issue.record("a response")
            return
        }
        #expect(response.status == .forbidden)
        #expect(response.headers["Retry-After"].isEmpty)
        #expect(try answered.wait() == true)
    }

    @Test func anAdmittedUpgradeGoesOnUntouchedTheGateLeavesAndItsAddressIsReleasedAtTheClose() throws {
        let released = NIOLockedValueBox<[String]>([])
        let (channel, answered) = try gate(.admitted(address: "10.0.0.7"), released: released)
        let request = head()
        try channel.writeInbound(HTTPServerRequestPart.head(request))
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) == .head(request))
        #expect(try answered.wait() == false)
        #expect(throws: (any Error).self) { try channel.pipeline.syncOperations.context(name: "gate") }
        try channel.writeInbound(HTTPServerRequestPart.end(nil))
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) == .end(nil))
        #expect(released.withLockedValue { $0 }.isEmpty, "counted while open")
        _ = try channel.finish()
        #expect(released.withLockedValue { $0 } == ["10.0.0.7"])
    }

    @Test func anyOtherRequestPassesAndAClosedConnectionLeavesNothingPending() throws {
        let (channel, answered) = try gate(.pass, released: NIOLockedValueBox([]))
        try channel.writeInbound(HTTPServerRequestPart.head(head("/", upgrade: false)))
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) != nil)
        #expect(try answered.wait() == false)
        let (quiet, never) = try gate(.pass, released: NIOLockedValueBox([]))
        _ = try quiet.finish()
        #expect(try never.wait() == false, "closed before a request: answered with nothing")
    }
}
