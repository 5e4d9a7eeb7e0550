internal import CAvahi

/// An error reported by libavahi-client.
public struct AvahiError: Error, CustomStringConvertible, Sendable {
    public var code: Int32
    public var context: String

    public init(code: Int32, context: String) {
        self.code = code
        self.context = context
    }

    public var description: String {
        "\(context): \(String(cString: avahi_strerror(code)))"
    }

    /// The daemon is not there (not running, or restarting).
    public var isDaemonMissing: Bool {
        code == Int32(AVAHI_ERR_NO_DAEMON) || code == Int32(AVAHI_ERR_DISCONNECTED)
    }
}
