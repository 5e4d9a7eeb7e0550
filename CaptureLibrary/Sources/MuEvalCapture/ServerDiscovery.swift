internal import MuEvalWire
#if canImport(ZeroconfBrowsing)
internal import ZeroconfBrowsing
#endif

/// Where the capture server listens.
public struct ServerAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// The Zeroconf service name, when found that way.
    public var name: String?
    /// Connect with TLS (the server's TXT record says `tls=1`, or the app asks for it).
    public var tls: Bool

    public init(host: String, port: Int, name: String? = nil, tls: Bool = false) {
        self.host = host
        self.port = port
        self.name = name
        self.tls = tls
    }

    /// `HOST:PORT`, `[IPv6]:PORT`: a device needs both a host and a port.
    public init(parsing text: String) throws(CaptureError) {
        guard let address = HostPort(parsing: text), !address.host.isEmpty, address.port > 0 else {
            throw .badAddress(text)
        }
        self.init(host: address.host, port: address.port)
    }

    public var description: String {
        let address = (host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)") + (tls ? " (TLS)" : "")
        return name.map { "\"\($0)\" at \(address)" } ?? address
    }
}

/// A capture server a browser found: what its announcement says.
public struct DiscoveredServer: Sendable, Equatable {
    public var name: String
    public var addresses: [String]
    public var port: Int
    public var txt: [String: String]

    public init(name: String, addresses: [String], port: Int, txt: [String: String]) {
        self.name = name
        self.addresses = addresses
        self.port = port
        self.txt = txt
    }
}

/// Browses for capture servers: Avahi on Linux (built in); on Apple platforms the app passes one made
/// with Network.framework's `NWBrowser` (docs/CAPTURE-LIBRARY.md shows it).
public protocol ServiceBrowser: Sendable {
    /// The servers announced under `type` that answered within `timeout` seconds.
    func browse(type: String, timeout: Double) async throws -> [DiscoveredServer]
}

#if canImport(ZeroconfBrowsing)
/// The system's avahi-daemon, through its client library.
public struct AvahiBrowser: ServiceBrowser {
    public init() {}

    public func browse(type: String, timeout: Double) async throws -> [DiscoveredServer] {
        try await ZeroconfBrowser.browse(type: type, timeout: timeout).map {
            DiscoveredServer(name: $0.name, addresses: $0.addresses, port: $0.port, txt: $0.txt)
        }
    }
}
#endif

/// Finds the capture server as the thesis's CaptureLibrary does: Zeroconf browse and resolve, then a
/// choice by the TXT record (docs/ZEROCONF.md).
public enum ServerDiscovery {
    /// What muevald announces.
    public static let serviceType = CaptureService.type

    /// The platform's browser, when it has one built in.
    public static var systemBrowser: (any ServiceBrowser)? {
        #if canImport(ZeroconfBrowsing)
        AvahiBrowser()
        #else
        nil
        #endif
    }

    /// The one server to use among those answering: the one named, else those a device with (or
    /// without) a token or pairing code may record with, preferring one with a session waiting.
    public static func find(name: String?, type: String = serviceType, timeout: Double, hasCredential: Bool,
                            alwaysTLS: Bool = false, browser: (any ServiceBrowser)? = nil) async throws -> ServerAddress {
        guard let browser = browser ?? systemBrowser else { throw CaptureError.discoveryUnavailable }
        let servers = try await browser.browse(type: type, timeout: timeout)
        return try choose(servers, name: name, type: type, timeout: timeout, hasCredential: hasCredential, alwaysTLS: alwaysTLS)
    }

    public static func choose(_ servers: [DiscoveredServer], name: String?, type: String = serviceType, timeout: Double,
                              hasCredential: Bool, alwaysTLS: Bool = false) throws(CaptureError) -> ServerAddress {
        let reachable = servers.filter { !$0.addresses.isEmpty }
        let chosen: DiscoveredServer
        if let name {
            guard let match = reachable.first(where: { $0.name == name }) else {
                throw .serverNotFound(name, available: reachable.map(\.name))
            }
            chosen = match
        } else {
            // `auth=token` or `pairing` refuses a hello without one; a server of another protocol version too.
            let usable = reachable.filter { server in
                (server.txt["protocol"].map { $0 == "1" } ?? true) && (hasCredential || ["none", nil].contains(server.txt["auth"]))
            }
            guard !usable.isEmpty else { throw .noServerFound(type: type, seconds: timeout) }
            let waiting = usable.filter { Int($0.txt["waiting"] ?? "0").map { $0 > 0 } ?? false }
            let candidates = waiting.isEmpty ? usable : waiting
            guard candidates.count == 1 else { throw .severalServers(candidates.map(\.name).sorted()) }
            chosen = candidates[0]
        }
        // IPv4 first: a link-local IPv6 address needs its interface, which the resolver does not give us.
        let host = chosen.addresses.first { !$0.contains(":") } ?? chosen.addresses[0]
        // TLS when the announced port requires it; or, asked for, on the TLS port beside a plaintext one.
        if chosen.txt["tls"] == "1" { return ServerAddress(host: host, port: chosen.port, name: chosen.name, tls: true) }
        if alwaysTLS, let port = chosen.txt["tls_port"].flatMap(Int.init) {
            return ServerAddress(host: host, port: port, name: chosen.name, tls: true)
        }
        return ServerAddress(host: host, port: chosen.port, name: chosen.name, tls: alwaysTLS)
    }
}
