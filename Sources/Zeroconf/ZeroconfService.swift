internal import BuildInfo
internal import Foundation
public import Logging
internal import NIOConcurrencyHelpers
public import ServiceLifecycle
public import SessionCore
internal import SessionModel

/// Announces the capture server over Zeroconf once it listens, keeps the TXT record's state
/// current as sessions start and stop, and withdraws the announcement first at shutdown.
///
/// Every call into Avahi is a D-Bus round trip that waits as long as avahi-daemon does (a hung or
/// stopped daemon: D-Bus's 25 s timeout), so they all run on one serial queue of their own, never
/// on the thread that reports a change (an event loop attaching a device, a control command).
/// Changes that arrive while an update waits are folded into one.
public final class ZeroconfService: Service, @unchecked Sendable {
    /// What the TXT record says of the capture server, read at each update: the daemon reads it from the capture
    /// server's settings (a peer of this module).
    public struct Capture: Sendable {
        /// Devices must present the server's token in `<hello>`.
        public var deviceToken: Bool
        /// The announced port requires TLS.
        public var tls: Bool

        public init(deviceToken: Bool, tls: Bool) {
            self.deviceToken = deviceToken
            self.tls = tls
        }
    }

    private let settings: ZeroconfSettings
    private let registry: SessionRegistry
    /// Subscribed at construction: every lifecycle event may change the TXT record's state.
    private let sessionEvents: SessionEventSubscription
    private let capture: @Sendable () -> Capture
    private let logger: Logger
    private let port: AsyncStream<Int>
    private let portContinuation: AsyncStream<Int>.Continuation
    private let publisher = NIOLockedValueBox<ZeroconfPublisher?>(nil)
    private let failure = NIOLockedValueBox<String?>(nil)
    private let avahiCalls = DispatchQueue(label: "mueval.zeroconf")
    /// The TLS listener beside the announced plaintext one, once it listens (TXT `tls_port`).
    private let tlsPort = NIOLockedValueBox<Int?>(nil)
    /// Whether a TXT update is queued and not yet begun: later changes ride along with it.
    private let refreshQueued = NIOLockedValueBox(false)
    /// How long shutdown waits for avahi-daemon to withdraw the announcement.
    static let withdrawTimeout: Duration = .seconds(3)

    public init(settings: ZeroconfSettings, registry: SessionRegistry, logger: Logger, capture: @escaping @Sendable () -> Capture) {
        self.settings = settings
        self.registry = registry
        sessionEvents = registry.events.subscribe()
        self.capture = capture
        self.logger = logger
        (port, portContinuation) = AsyncStream.makeStream(of: Int.self)
    }

    /// The capture server listens on `port`: announce it.
    public func listening(on port: Int) {
        portContinuation.yield(port)
        portContinuation.finish()
    }

    /// For `muevalctl status`.
    public var state: AnnouncementState? {
        if let reason = failure.withLockedValue({ $0 }) { return .failed(reason: reason) }
        return publisher.withLockedValue { $0?.state }
    }

    public func run() async throws {
        var ports = port.cancelOnGracefulShutdown().makeAsyncIterator()
        guard let port = await ports.next() else { return }
        let host = ProcessInfo.processInfo.hostName
        let announcement = ServiceAnnouncement(
            name: Self.instanceName(settings.name),
            types: [ServiceAnnouncement.captureServiceType] + settings.extraTypes,
            port: UInt16(port), txt: txt())
        let publisher: ZeroconfPublisher
        do {
            publisher = try ZeroconfPublisher(announcement: announcement, hostPortHint: "\(host):\(port)", logger: logger)
            try publisher.start()
        } catch {
            // Announcing is a convenience: the capture server goes on without it.
            logger.error("zeroconf: cannot announce, devices must connect to \(host):\(port) by hand: \(error)")
            failure.withLockedValue { $0 = "\(error)" }
            sessionEvents.cancel()
            try? await gracefulShutdown()
            return
        }
        self.publisher.withLockedValue { $0 = publisher }
        // Until shutdown: the TXT record follows the sessions (refreshes that pile up fold into one).
        await withDiscardingTaskGroup { group in
            group.addTask { [sessionEvents] in
                for await _ in sessionEvents { self.scheduleRefresh() }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        if await withdraw(publisher) {
            logger.info("zeroconf: announcement withdrawn")
        } else {
            logger.warning("zeroconf: avahi-daemon did not answer within \(Self.withdrawTimeout); stopping without withdrawing the announcement")
        }
    }

    /// Withdraws on the Avahi queue; false when that took longer than `withdrawTimeout` (shutdown goes on).
    private func withdraw(_ publisher: ZeroconfPublisher) async -> Bool {
        let done = NIOLockedValueBox(false)
        avahiCalls.async {
            publisher.stop()
            done.withLockedValue { $0 = true }
        }
        let deadline = ContinuousClock.now + Self.withdrawTimeout
        while !done.withLockedValue({ $0 }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return done.withLockedValue { $0 }
    }

    /// The TLS listener beside the announced one listens on `port`: the TXT record says so.
    public func listeningTLS(on port: Int) {
        tlsPort.withLockedValue { $0 = port }
        scheduleRefresh()
    }

    /// A reload changed the instance name (nil: the default) or what devices must present.
    public func reloaded(name: String?) {
        avahiCalls.async { [self] in publisher.withLockedValue { $0 }?.rename(to: Self.instanceName(name)) }
        scheduleRefresh()
    }

    /// Queues a TXT update, unless one is queued already (it will read the state when it runs).
    private func scheduleRefresh() {
        let alreadyQueued = refreshQueued.withLockedValue { queued in
            defer { queued = true }
            return queued
        }
        guard !alreadyQueued else { return }
        avahiCalls.async { [self] in
            refreshQueued.withLockedValue { $0 = false }
            publisher.withLockedValue { $0 }?.update(txt: txt())
        }
    }

    private static func instanceName(_ configured: String?) -> String {
        let host = ProcessInfo.processInfo.hostName
        return configured ?? "muEval on \(host.split(separator: ".").first.map(String.init) ?? host)"
    }

    /// The TXT record: versions, and whether the server records and how many sessions wait for a device.
    private func txt() -> [(key: String, value: String)] {
        let sessions = registry.openSessions().map(\.snapshot)
        let capture = capture()
        let recording = sessions.contains { $0.state == .recording }
        let waiting = sessions.filter { $0.state == .waiting }.count
        // What a device must present in <hello>: the server's token, a session's pairing code, both
        // (a paired session under a device token needs the two), or nothing.
        let needs = [capture.deviceToken ? "token" : nil, sessions.contains { $0.pairingCode != nil } ? "pairing" : nil]
        let auth = needs.compactMap { $0 }.joined(separator: ",")
        var txt = [("txtvers", "1"), ("protocol", "1"), ("server", MuEvalVersion.current),
                   ("state", recording ? "recording" : "idle"), ("waiting", String(waiting)), ("auth", auth.isEmpty ? "none" : auth)]
        // The announced port requires TLS (`tls=1`), or a TLS port runs beside it (`tls_port`).
        if capture.tls { txt.append(("tls", "1")) }
        if let port = tlsPort.withLockedValue({ $0 }) { txt.append(("tls_port", String(port))) }
        return txt
    }
}
