internal import WireProtocol
public import Zeroconf

/// Where the capture server listens.
public struct ServerAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// The Zeroconf service name, when found that way.
    public var name: String?
    /// Connect with TLS (`--tls`, or TXT `tls=1`).
    public var tls: ClientTLS?

    public init(host: String, port: Int, name: String? = nil, tls: ClientTLS? = nil) {
        self.host = host
        self.port = port
        self.name = name
        self.tls = tls
    }

    public static func == (lhs: ServerAddress, rhs: ServerAddress) -> Bool {
        lhs.host == rhs.host && lhs.port == rhs.port && lhs.name == rhs.name && lhs.tls === rhs.tls
    }

    /// `HOST:PORT`, `[IPv6]:PORT`: a device needs both a host and a port.
    public init(parsing text: String) throws(SimulatorError) {
        guard let address = HostPort(parsing: text), !address.host.isEmpty, address.port > 0 else {
            throw .badAddress(text)
        }
        self.init(host: address.host, port: address.port)
    }

    public var description: String {
        let address = (host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)") + (tls == nil ? "" : " (TLS)")
        return name.map { "\"\($0)\" at \(address)" } ?? address
    }
}

public enum SimulatorError: Error, CustomStringConvertible, Equatable {
    case badAddress(String)
    case noServerFound(type: String, seconds: Double)
    case severalServers([String])
    case serverNotFound(String, available: [String])
    case badTLS(String)

    public var description: String {
        switch self {
        case .badAddress(let text):
            "\"\(text)\" is not HOST:PORT (for example 127.0.0.1:28021 or [::1]:28021)"
        case .noServerFound(let type, let seconds):
            "no capture server answered for \(type) within \(seconds) s: is muevald running with Zeroconf on this network (and avahi-daemon here)? Or give --connect HOST:PORT"
        case .severalServers(let names):
            "several capture servers answered: \(names.map { "\"\($0)\"" }.joined(separator: ", ")); choose one with --server NAME"
        case .badTLS(let reason):
            "cannot set up TLS: \(reason)"
        case .serverNotFound(let name, let available):
            "no capture server named \"\(name)\" answered; found: \(available.isEmpty ? "none" : available.map { "\"\($0)\"" }.joined(separator: ", "))"
        }
    }
}

/// Finds the capture server the way the thesis's capture library does: Zeroconf browse and resolve.
public enum ServerLocator {
    /// The one server answering (or the one named); with TLS when its TXT record says `tls=1`, or
    /// always with `alwaysTLS`: through `tls` (its trust roots) or, without it, the system's.
    public static func discover(name: String?, type: String = ServiceAnnouncement.captureServiceType,
                                timeout: Double, tls: ClientTLS? = nil, alwaysTLS: Bool = false) async throws -> ServerAddress {
        let services = try await ZeroconfBrowser.browse(type: type, timeout: timeout).filter { !$0.addresses.isEmpty }
        let chosen: DiscoveredService
        if let name {
            guard let match = services.first(where: { $0.name == name }) else {
                throw SimulatorError.serverNotFound(name, available: services.map(\.name))
            }
            chosen = match
        } else {
            guard let only = services.first else { throw SimulatorError.noServerFound(type: type, seconds: timeout) }
            guard services.count == 1 else { throw SimulatorError.severalServers(services.map(\.name)) }
            chosen = only
        }
        // IPv4 first: a link-local IPv6 address needs its interface, which the resolver does not give us.
        let address = chosen.addresses.first { !$0.contains(":") } ?? chosen.addresses[0]
        let needsTLS = alwaysTLS || chosen.txt["tls"] == "1"
        return ServerAddress(host: address, port: chosen.port, name: chosen.name, tls: needsTLS ? try tls ?? ClientTLS() : nil)
    }
}
