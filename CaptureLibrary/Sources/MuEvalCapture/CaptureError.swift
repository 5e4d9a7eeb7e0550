/// What can go wrong in the library, each with what to do about it.
public enum CaptureError: Error, CustomStringConvertible, Equatable {
    case badAddress(String)
    case noServerFound(type: String, seconds: Double)
    case severalServers([String])
    case serverNotFound(String, available: [String])
    /// The server announces TLS and no `CaptureConfiguration.security` was given.
    case securityNeeded(String)
    case badSecurity(String)
    case spool(String, String)
    case alreadyCapturing
    case discoveryUnavailable
    case cannotConnect(String, String)
    /// A task mark for a task the study does not have (once the server sent its tasks).
    case unknownTask(String, tasks: [String])

    public var description: String {
        switch self {
        case .badAddress(let text):
            "\"\(text)\" is not HOST:PORT (for example 127.0.0.1:28021 or [::1]:28021)"
        case .noServerFound(let type, let seconds):
            "no capture server answered for \(type) within \(seconds) s: is muevald running with Zeroconf on this network (and avahi-daemon here)? Or give the server's address"
        case .severalServers(let names):
            "several capture servers answered: \(names.map { "\"\($0)\"" }.joined(separator: ", ")); choose one by its name"
        case .serverNotFound(let name, let available):
            "no capture server named \"\(name)\" answered; found: \(available.isEmpty ? "none" : available.map { "\"\($0)\"" }.joined(separator: ", "))"
        case .securityNeeded(let server):
            "\(server) requires TLS: give the library a TLS configuration (CaptureConfiguration.security)"
        case .badSecurity(let reason):
            "cannot set up TLS: \(reason)"
        case .spool(let path, let reason):
            "the spool \(path) cannot be used: \(reason)"
        case .alreadyCapturing:
            "capture is already started: stopCapture() first"
        case .cannotConnect(let server, let reason):
            "cannot connect to \(server): \(reason)"
        case .unknownTask(let name, let tasks):
            "the study has no task \"\(name)\"; its tasks: \(tasks.map { "\"\($0)\"" }.joined(separator: ", "))"
        case .discoveryUnavailable:
            "this platform has no Zeroconf browser built in: give the server's address, or a ServiceBrowser (docs/CAPTURE-LIBRARY.md)"
        }
    }
}
