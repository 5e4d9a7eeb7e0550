internal import Foundation

/// An IP address as the per-address limits see it: parsed by the C library (`inet_pton`), IPv4-mapped
/// IPv6 addresses taken as their IPv4 address, an IPv6 zone (`%eth0`) and brackets dropped. A zone is
/// read only after an IPv6 address and only as RFC 6874 writes one (letters, digits, `-._~`): proxy
/// headers are a stranger's text, and `192.0.2.1%<anything>` is no address.
package struct NetworkAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), network order.
    package let bytes: [UInt8]

    package init?(_ text: some StringProtocol) {
        var bare = Substring(text)
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = bare.dropFirst().dropLast() }
        var zone: Substring?
        if let percent = bare.firstIndex(of: "%") {
            zone = bare[bare.index(after: percent)...]
            bare = bare[..<percent]
        }
        if let zone {
            guard bare.contains(":"), !zone.isEmpty, zone.unicodeScalars.allSatisfy(Self.zoneCharacters.contains) else { return nil }
        }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, String(bare), &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, String(bare), &v6) == 1 {
            let all = withUnsafeBytes(of: &v6) { Array($0) }
            let mapped = all.prefix(10).allSatisfy { $0 == 0 } && all[10] == 0xff && all[11] == 0xff
            bytes = mapped ? Array(all.suffix(4)) : all
        } else {
            return nil
        }
    }

    /// RFC 6874's `ZoneID`: unreserved characters.
    private static let zoneCharacters = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    package var isIPv6: Bool { bytes.count == 16 }

    /// The first `bits` bits, the rest zero.
    package func masked(to bits: Int) -> NetworkAddress {
        NetworkAddress(bytes: bytes.enumerated().map { index, byte in
            let keep = min(max(bits - index * 8, 0), 8)
            return keep == 8 ? byte : byte & ~(0xff >> keep)
        })
    }

    /// `inet_ntop`'s form (RFC 5952 for IPv6).
    package var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = isIPv6 ? AF_INET6 : AF_INET
        let written = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(clamping: text.count)) }
        guard written != nil else { return "?" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// What the limits count by, finest first: an IPv4 address alone; an IPv6 address by its /64 (one
    /// host gets a whole /64) and by its /48 (one site gets a whole /48, 65,536 /64s).
    package var limitKeys: [LimitKey] {
        guard isIPv6 else { return [LimitKey(name: description, isNetwork: false)] }
        return [LimitKey(name: "\(masked(to: 64))/64", isNetwork: false), LimitKey(name: "\(masked(to: 48))/48", isNetwork: true)]
    }

    /// One key the limits count by. A network's limits are `network_factor` times an address's.
    package struct LimitKey: Sendable, Hashable {
        package var name: String
        /// An IPv6 /48: a site, many hosts.
        package var isNetwork: Bool
    }

    /// The keys for an address as text; text that is no address is one key as it is (a Unix socket's
    /// peer, say), so that it is still limited.
    package static func limitKeys(_ address: String) -> [LimitKey] {
        NetworkAddress(address)?.limitKeys ?? [LimitKey(name: address, isNetwork: false)]
    }
}

/// An address with a prefix length (`10.0.0.0/8`, `fd00::/8`, or one address): `console.trusted_proxies`.
package struct NetworkRange: Sendable, Hashable, CustomStringConvertible {
    package let network: NetworkAddress
    package let prefixLength: Int

    package init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = NetworkAddress(parts[0]) else { return nil }
        let written = parts[0].contains(":") ? 128 : 32
        guard parts.count == 2 else {
            prefixLength = address.bytes.count * 8
            network = address
            return
        }
        guard let length = Int(parts[1]), (0...written).contains(length) else { return nil }
        // `::ffff:10.0.0.0/104` names IPv4 addresses (kept as such): its length counts within the IPv4 part.
        prefixLength = address.isIPv6 || written == 32 ? length : length - 96
        guard prefixLength >= 0 else { return nil }
        network = address.masked(to: prefixLength)
    }

    package func contains(_ address: NetworkAddress) -> Bool {
        address.bytes.count == network.bytes.count && address.masked(to: prefixLength) == network
    }

    package var description: String { "\(network)/\(prefixLength)" }
}
