/// An address of the capture port as people write it: `HOST:PORT`, `[IPv6]:PORT`, or `:PORT` (no
/// host). muevald's `server.listen` and muevalsim's `--connect` both read it; each adds its own rule
/// on what may be left out (muevald listens on every interface without a host).
public struct HostPort: Sendable, Equatable {
    /// Without brackets; empty for `:PORT`.
    public var host: String
    /// 0 through 65535.
    public var port: Int

    public init?(parsing text: String) {
        let host: Substring
        let port: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            port = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard let number = Int(port), (0...65535).contains(number) else { return nil }
        self.host = String(host)
        self.port = number
    }

    /// `HOST:PORT`, with brackets around an IPv6 host: what `init(parsing:)` reads back.
    public static func text(host: String, port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
