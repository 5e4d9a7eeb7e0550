internal import Foundation

/// The names a browser may reach the console by, as its `Host` header says. A page on another site
/// whose name an attacker points at 127.0.0.1 (DNS rebinding) runs in that site's origin, so the
/// browser's same-origin rules let it read the answers; its requests still carry that site's name
/// in `Host`, and are refused here before anything, `/metrics` and the login included, answers them.
struct ConsoleHosts: Sendable, Equatable {
    private let names: Set<String>

    /// Loopback names, the address the console listens on (or, on a wildcard one, this machine's name,
    /// which login links use), `public_url`'s host and `console.allowed_hosts`.
    init(settings: ConsoleSettings, machineName: String = ProcessInfo.processInfo.hostName) {
        var names: Set<String> = ["localhost", "127.0.0.1", "::1"]
        let listen = settings.host
        if listen == "0.0.0.0" || listen == "::" || listen.isEmpty { names.insert(machineName) } else { names.insert(listen) }
        if let publicURL = settings.publicURL, let host = URLComponents(string: publicURL)?.host { names.insert(host) }
        names.formUnion(settings.allowedHosts)
        self.names = Set(names.compactMap { Self.hostname(of: $0) })
    }

    /// Whether a request with this `Host` (authority) may be answered.
    func allows(_ authority: String?) -> Bool {
        guard let authority, let host = Self.hostname(of: authority) else { return false }
        return names.contains(host)
    }

    /// The host of `host`, `host:port`, `[v6]` or `[v6]:port`, lower-cased and without a final dot;
    /// nil when it is malformed (a port that is not digits, user info, an empty name).
    static func hostname(of authority: String) -> String? {
        var host = Substring(authority.lowercased())
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            guard rest.isEmpty || isPort(rest) else { return nil }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            // Exactly one colon is a port; several (a bare IPv6 address) are the host itself.
            if host.firstIndex(of: ":") == colon {
                guard isPort(host[colon...]) else { return nil }
                host = host[..<colon]
            }
        }
        if host.hasSuffix(".") { host = host.dropLast() }
        guard !host.isEmpty, !host.contains("@"), !host.contains("/") else { return nil }
        return String(host)
    }

    /// `:` and 1 to 5 digits.
    private static func isPort(_ text: Substring) -> Bool {
        text.first == ":" && (2...6).contains(text.count) && text.dropFirst().allSatisfy(\.isASCIIDigit)
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
