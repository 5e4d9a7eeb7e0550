/// How the web console is served (`[console]` in muevald.toml, docs/CONSOLE.md).
public struct ConsoleSettings: Sendable, Equatable {
    public var enabled = true
    /// Loopback by default: the console is as powerful as the control socket. Another address must be configured on purpose.
    public var host = "127.0.0.1"
    /// 0 picks a free port (tests); `muevalctl console` links to the real one.
    public var port = 28080
    /// The address login links start with, when the browser reaches the console through another name
    /// (a reverse proxy, an ssh tunnel to another port); nil: built from the address the console listens on.
    public var publicURL: String?
    /// Further names browsers reach the console by (its `Host` header): loopback names, the `listen`
    /// address and `public_url`'s host are always allowed; any other name is refused (DNS rebinding).
    public var allowedHosts: [String] = []
    /// Plaintext HTTP on an address beyond this machine: refused at start unless set on purpose.
    public var allowPlaintext = false
    /// PEM files; both set: the console speaks HTTPS only and its cookie is `Secure`.
    public var tlsCertificate: String?
    public var tlsKey: String?
    public var access = ConsoleAccessLimits()
    /// Reverse proxies (addresses or ranges, `10.0.0.0/8`) whose `Forwarded`/`X-Forwarded-For` names the
    /// visitor the per-address limits count; a request from anywhere else counts by its own address.
    public var trustedProxies: [String] = []
    /// What one address may do on the pages without a login (enrolment, invitation, withdrawal).
    public var visitors = VisitorLimits()
    /// Live events queued for one browser; beyond, events are skipped and the page says how many.
    public var liveBuffer = 4096
    /// What arrives on the Live page's stream within this many milliseconds of the last message goes out
    /// as one message (a frame at 60 Hz): one write and one repaint per frame however often the session
    /// commits. 0: each commit at once.
    public var liveBatchMilliseconds: Double = 16
    /// The largest request body the API reads (a note, a new session).
    public var maxBodyBytes = 64 * 1024
    /// Where saved report configurations are read (the same files as `muevalctl report-config`); nil: that command's default.
    public var reportConfigurations: String?
    /// Which of a recorded web app's images, fonts and stylesheets the lab's browser fetches in a page replay
    /// (`replay.remote_assets`); the rest are shown as empty boxes.
    public var replayRemoteAssets = PageRemoteAssets.webOrigins
    /// MiB of sanitised page records the console keeps for the next seek (`replay.page_cache_mib`).
    public var replayPageCacheMiB = 64

    public init() {}

    public var usesTLS: Bool { tlsCertificate != nil && tlsKey != nil }

    /// Whether the address reaches beyond this machine.
    public var isLoopbackOnly: Bool {
        host == "127.0.0.1" || host == "::1" || host == "localhost" || host.hasPrefix("127.")
    }
}

/// Which of a web app's images, fonts and stylesheets the lab's browser fetches when it replays the page
/// (`replay.remote_assets`, docs/SECURITY.md "Page recordings"): the rest are shown as empty boxes.
public enum PageRemoteAssets: String, Sendable, Equatable, CaseIterable {
    /// Only from the origins in `capture.web_origins`: the apps the lab let capture.
    case webOrigins = "web_origins"
    /// From any http(s) origin a recorded page named.
    case all
    /// None: the page's text, colours and layout only.
    case none
}
