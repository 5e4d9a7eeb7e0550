internal import Foundation
internal import HTTPTypes
internal import WireProtocol

/// Who a visitor is when the console sits behind reverse proxies (`console.trusted_proxies`): without
/// them every tester would have the proxy's address, and ten wrong codes from one tester would lock
/// out all (docs/SECURITY.md, "The pages for testers").
///
/// A request from a trusted proxy names its client in `Forwarded` (RFC 7239, `for=`) or, without that,
/// `X-Forwarded-For`; each proxy appends the address it heard from. The client is the right-most address
/// that is not a trusted proxy: everything left of it was written by that client and may be forged.
/// A request from anywhere else is its peer, whatever its headers say. An address taken from a header is
/// returned in its canonical form (`inet_ntop`'s).
struct ConsoleProxies: Sendable {
    private let trusted: [NetworkRange]

    /// `ranges` were checked when the configuration was read; one that does not parse trusts nothing.
    init(_ ranges: [String]) {
        trusted = ranges.compactMap { NetworkRange($0) }
    }

    /// The address the limits count for a request from `peer`.
    func client(peer: String, headers: HTTPFields) -> String {
        guard isTrusted(peer) else { return peer }
        let forwarded = headers[values: Self.forwarded]
        let chain = forwarded.isEmpty ? headers[values: Self.forwardedFor].flatMap { $0.split(separator: ",") }.map(Self.node)
            : forwarded.flatMap { $0.split(separator: ",") }.map(Self.forNode)
        var client = peer
        for hop in chain.reversed() {
            // A hop that names no address (`unknown`, `_hidden`, garbage): the client is unknown, so the
            // proxy that wrote it stands for it (counting everyone behind it together, the safe side).
            guard let hop, let address = NetworkAddress(hop) else { return client }
            // The address as muevald writes it, not the header's text: a stranger's bytes reach no log.
            client = address.description
            guard isTrusted(client) else { return client }
        }
        return client
    }

    private func isTrusted(_ address: String) -> Bool {
        guard !trusted.isEmpty, let address = NetworkAddress(address) else { return false }
        return trusted.contains { $0.contains(address) }
    }

    static let forwarded = HTTPField.Name("Forwarded")!
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    /// The `for=` of one element of `Forwarded` (`for=192.0.2.43;proto=https`, `For="[2001:db8::1]:4711"`).
    private static func forNode(_ element: Substring) -> String? {
        for pair in element.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "for" else { continue }
            var value = Substring(parts[1].trimmingCharacters(in: .whitespaces))
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = value.dropFirst().dropLast() }
            return node(value)
        }
        return nil
    }

    /// An address without its port: `192.0.2.1`, `192.0.2.1:80`, `[2001:db8::1]:4711`, `2001:db8::1`.
    private static func node(_ text: Substring) -> String? {
        let value = text.trimmingCharacters(in: .whitespaces)
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return nil }
            return String(value[value.index(after: value.startIndex)..<close])
        }
        let colons = value.count(where: { $0 == ":" })
        return colons == 1 ? String(value.prefix { $0 != ":" }) : value
    }
}
