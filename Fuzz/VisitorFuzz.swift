// The console's public edge (target `visitor`): what a stranger on the internet controls before any login —
// the request's Host and path, the proxy headers, the per-address quotas, the login code, and the bodies of an
// enrolment and a withdrawal. Fuzz/build.sh compiles the console's files these need (they build without
// Hummingbird) into this module: ConsoleAccess, ConsoleHosts, ConsoleProxies, ConsoleSettings, ConsoleVisitors
// and ConsoleVisitorForms, with `ConsoleError` (ConsoleFuzz.swift) standing in for the console's.

internal import Foundation
internal import HTTPTypes
internal import SessionModel
internal import TesterPool
internal import WireProtocol

enum VisitorFuzz {
    static func run(_ bytes: [UInt8]) throws {
        var input = FuzzInput(bytes)
        switch input.below(5) {
        case 0: request(&input)
        case 1: proxies(&input)
        case 2: quotas(&input)
        case 3: login(&input)
        default: try bodies(Array(bytes.dropFirst()))
        }
    }

    /// Addresses of every kind the limits meet, and one site's /64s.
    static let addresses = ["127.0.0.1", "10.1.2.3", "192.0.2.1", "::1", "fd00::1", "2001:db8:1:1::1", "2001:db8:1:2::1",
                            "2001:db8:1:3::9", "::ffff:192.0.2.1", "fe80::1%eth0", "unknown", ""]

    /// A Host header, a path, an address and a range: only the console's names are let in, an address and
    /// a range read back as they were read.
    static func request(_ input: inout FuzzInput) {
        let authority = String(decoding: input.bytes(Int(input.below(80))), as: UTF8.self)
        var settings = ConsoleSettings()
        settings.allowedHosts = ["lab.example.org"]
        if ConsoleHosts(settings: settings, machineName: "lab").allows(authority) {
            let host = ConsoleHosts.hostname(of: authority)
            precondition(["localhost", "127.0.0.1", "::1", "lab.example.org"].contains(host ?? ""), "\(authority) let in as \(host ?? "nil")")
        }
        let text = String(decoding: input.bytes(Int(input.below(64))), as: UTF8.self)
        if Invitation.isCode(text) { precondition(text.unicodeScalars.count == 10 && text.unicodeScalars.allSatisfy(\.isASCII)) }
        if let address = NetworkAddress(text) {
            precondition(NetworkAddress(address.description) == address, "\(text) reads back as \(address)")
            precondition(!address.limitKeys.isEmpty)
        }
        if let range = NetworkRange(text) {
            precondition(range.contains(range.network), "\(text): \(range) does not contain its own network")
            precondition(NetworkRange(range.description) == range, "\(text) reads back as \(range)")
        }
    }

    /// Any `Forwarded`/`X-Forwarded-For` from any peer: an untrusted peer is itself, whatever it claims; a
    /// trusted one's client is the peer or, in canonical form, an address its headers name.
    static func proxies(_ input: inout FuzzInput) {
        let proxies = ConsoleProxies(["10.0.0.0/8", "fd00::/8", "127.0.0.1"])
        let peer = input.bool() ? addresses[input.below(addresses.count)] : String(decoding: input.bytes(40), as: UTF8.self)
        var headers = HTTPFields()
        for _ in 0..<input.below(4) {
            let name = input.bool() ? ConsoleProxies.forwarded : ConsoleProxies.forwardedFor
            headers.append(HTTPField(name: name, value: String(decoding: input.bytes(Int(input.below(200))), as: UTF8.self)))
        }
        let client = proxies.client(peer: peer, headers: headers)
        let trusted = NetworkAddress(peer).map { address in
            ["10.0.0.0/8", "fd00::/8", "127.0.0.1"].contains { NetworkRange($0)!.contains(address) }
        } ?? false
        precondition(trusted || client == peer, "untrusted \(peer) counted as \(client)")
        guard client != peer else { return }
        // What the headers name, read from the fields as stored: HTTPField turns control bytes into spaces.
        let named = headers.flatMap { field in
            field.value.unicodeScalars.split { ",;=\"[]".unicodeScalars.contains($0) || $0.properties.isWhitespace }.map(String.init)
                .flatMap { token in [NetworkAddress(token), NetworkAddress(token.prefix { $0 != ":" })] }
        }
        precondition(named.contains { $0?.description == client }, "\(peer) counted as \(client), which its headers do not name")
    }

    /// Uses by a few addresses at increasing times: no /64 gets more than its limit in one window, and
    /// no /48 more than the network factor times it (a fixed window: at most twice that over any 60 s).
    static func quotas(_ input: inout FuzzInput) {
        let limit = 1 + input.below(4), factor = 1 + input.below(3)
        let quotas = VisitorQuotas(limits: VisitorLimits(requestsPerMinute: limit, trackedAddresses: 64, networkFactor: factor))
        var now = 0.0
        var allowed: [String: [Double]] = [:]
        for _ in 0..<input.below(64) {
            now += Double(input.below(40))
            let address = addresses[input.below(addresses.count)]
            guard (try? quotas.use(.request, by: address, now: now)) != nil else { continue }
            for key in NetworkAddress.limitKeys(address) { allowed[key.name, default: []].append(now) }
        }
        for (key, times) in allowed {
            let most = key.hasSuffix("/48") ? limit * factor : limit
            for start in times {
                let inMinute = times.count { $0 >= start && $0 < start + 60 }
                precondition(inMinute <= 2 * most, "\(key): \(inMinute) uses in a minute, limit \(most)")
            }
        }
    }

    /// Any code at any time: only the code issued logs in, once.
    static func login(_ input: inout FuzzInput) {
        var state = ConsoleAccessState(limits: ConsoleAccessLimits())
        let issuedAt = input.time()
        let code = "0123456789abcdef0123456789abcdef"
        _ = state.issue(code: code, now: issuedAt)
        let guess = input.string()
        let now = input.time()
        if case .loggedIn = state.redeem(code: guess, sessionID: "s1", csrfToken: "t1", now: now) {
            precondition(guess == code, "\(guess) logged in")
            if case .loggedIn = state.redeem(code: guess, sessionID: "s2", csrfToken: "t2", now: now) {
                preconditionFailure("a login code worked twice")
            }
        }
    }

    /// An enrolment's and a withdrawal's JSON body against a real pool: what is stored has no character that
    /// breaks a listing's lines or turns its text, and no withdrawal succeeds without the secret.
    static func bodies(_ bytes: [UInt8]) throws {
        let data = Data(bytes)
        try withScratch { directory in
            let store = try TesterStore(directory: directory)
            _ = try store.configure(consent: "I agree.", fields: [PoolField(name: "age", label: "Age", choices: ["18-29", "30-49", "50+"]),
                                                               PoolField(name: "job", label: "Job")], now: 0)
            if let form = try? JSONDecoder().decode(EnrolmentRequest.self, from: data), let profile = form.profile,
               let enrolment = try? store.enrol(profile: profile, consentVersion: form.consentVersion ?? 0, now: 1) {
                for answer in enrolment.tester.profile.values {
                    precondition(!answer.unicodeScalars.contains { $0.properties.generalCategory == .control || $0.properties.isBidiControl
                                     || $0 == "\u{2028}" || $0 == "\u{2029}" }, "stored answer \(answer.debugDescription)")
                }
            }
            if let form = try? JSONDecoder().decode(WithdrawalRequest.self, from: data) {
                // The code the body names, and the tester just enrolled (if any): neither without its secret.
                for code in [form.code ?? ""] + ((try? store.testers())?.map(\.code) ?? []) {
                    let withdrawn = try? store.requestWithdrawal(code, secret: form.secret ?? "", deleteRecordings: form.deleteRecordings == true, now: 2)
                    precondition(withdrawn == nil, "a withdrawal of \(code) without the secret")
                }
            }
        }
    }
}
