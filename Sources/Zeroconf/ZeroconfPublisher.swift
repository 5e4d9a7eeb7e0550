internal import CAvahi
public import Logging
internal import NIOConcurrencyHelpers
internal import ZeroconfBrowsing

/// Announces the capture service through the system's avahi-daemon, and keeps it announced.
///
/// Avahi's threaded poll runs the client on its own thread, so announcing never blocks event
/// ingestion. The client is created with AVAHI_CLIENT_NO_FAIL: when avahi-daemon is missing
/// at start or restarts later, the client waits for it and the service is announced again as
/// soon as it is back, without restarting muevald. A name already taken on the network is
/// replaced by Avahi's alternative ("muEval on lab #2"), which `state` reports. When not even
/// a client can be made (no D-Bus system bus, no avahi-daemon installed), it retries every few
/// seconds on Avahi's own timer instead of failing: the capture server works without Zeroconf.
///
/// Every Avahi call outside the poll thread holds the poll's lock; callbacks run on the poll
/// thread with the lock held.
public final class ZeroconfPublisher: @unchecked Sendable {
    private let poll: OpaquePointer
    private var client: OpaquePointer?
    private var group: OpaquePointer?
    /// The desired announcement; its name follows Avahi's alternatives after collisions.
    private var announcement: ServiceAnnouncement
    private let logger: Logger
    private let hostPortHint: String
    private let published = NIOLockedValueBox<AnnouncementState>(.starting)
    private var warnedAboutMissingDaemon = false
    private var stopped = false
    /// Armed while no client could be made; fires `retryConnect` on the poll thread.
    private var retryTimer: OpaquePointer?
    static let retryInterval: UInt32 = 2000

    /// - Parameter hostPortHint: what devices must connect to by hand when Avahi is missing ("lab:28021").
    public init(announcement: ServiceAnnouncement, hostPortHint: String, logger: Logger) throws {
        guard let poll = avahi_threaded_poll_new() else {
            throw AvahiError(code: Int32(AVAHI_ERR_NO_MEMORY), context: "cannot create Avahi's event loop")
        }
        self.poll = poll
        self.announcement = announcement
        self.hostPortHint = hostPortHint
        self.logger = logger
    }

    deinit {
        stop()
        avahi_threaded_poll_free(poll)
    }

    /// Where the announcement stands.
    public var state: AnnouncementState { published.withLockedValue { $0 } }

    /// Connects to avahi-daemon (or waits for it) and announces.
    public func start() throws {
        avahi_threaded_poll_lock(poll)
        connectOrRetry()
        avahi_threaded_poll_unlock(poll)
        guard avahi_threaded_poll_start(poll) == 0 else {
            throw AvahiError(code: Int32(AVAHI_ERR_FAILURE), context: "cannot start Avahi's event loop thread")
        }
    }

    /// Replaces the TXT record (state changes: idle / recording, sessions waiting).
    public func update(txt: [(key: String, value: String)]) {
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        announcement.txt = txt
        guard let group, avahi_entry_group_is_empty(group) == 0 else { return }
        let list = Self.stringList(txt)
        defer { avahi_string_list_free(list) }
        for type in announcement.types {
            let code = avahi_entry_group_update_service_txt_strlst(
                group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiPublishFlags(0), announcement.name, type, nil, list)
            if code < 0 { logger.warning("zeroconf: cannot update the TXT record: \(AvahiError(code: code, context: type))") }
        }
    }

    /// Announces under another instance name (a reload changed `zeroconf.name`).
    public func rename(to name: String) {
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        guard name != announcement.name, !stopped else { return }
        logger.notice("zeroconf: announcing as \"\(name)\" instead of \"\(announcement.name)\"")
        announcement.name = name
        if let client, avahi_client_get_state(client) == AVAHI_CLIENT_S_RUNNING { register(on: client) }
    }

    /// Withdraws the announcement and disconnects from avahi-daemon.
    public func stop() {
        avahi_threaded_poll_lock(poll)
        guard !stopped else {
            avahi_threaded_poll_unlock(poll)
            return
        }
        stopped = true
        if let retryTimer, let api = avahi_threaded_poll_get(poll) { api.pointee.timeout_free(retryTimer) }
        retryTimer = nil
        if let group { avahi_entry_group_free(group) }
        group = nil
        if let client { avahi_client_free(client) }
        client = nil
        avahi_threaded_poll_unlock(poll)
        avahi_threaded_poll_stop(poll)
        published.withLockedValue { $0 = .withdrawn }
    }

    // MARK: On the poll thread (or under its lock)

    /// Makes a client, which then waits for avahi-daemon by itself; when even that fails, tries again later.
    private func connectOrRetry() {
        var error: Int32 = 0
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        // The callback runs for the first time inside avahi_client_new, before `client` is set:
        // it works with the pointer it is given.
        if let created = avahi_client_new(avahi_threaded_poll_get(poll), AVAHI_CLIENT_NO_FAIL,
                                          publisherClientCallback, userdata, &error) {
            client = created
            return
        }
        set(.waitingForAvahi)
        warnAboutMissingDaemon(because: AvahiError(code: error, context: "cannot create an Avahi client").description)
        guard let api = avahi_threaded_poll_get(poll) else { return }
        var when = timeval()
        avahi_elapse_time(&when, Self.retryInterval, 0)
        if let retryTimer {
            api.pointee.timeout_update(retryTimer, &when)
        } else {
            retryTimer = api.pointee.timeout_new(api, &when, publisherRetryCallback, userdata)
        }
    }

    fileprivate func retryConnect() {
        guard client == nil, !stopped else { return }
        connectOrRetry()
    }

    private func warnAboutMissingDaemon(because reason: String) {
        guard !warnedAboutMissingDaemon else {
            logger.debug("zeroconf: still waiting for avahi-daemon: \(reason)")
            return
        }
        warnedAboutMissingDaemon = true
        logger.warning("zeroconf: avahi-daemon is not running: devices must connect to \(hostPortHint) by hand until it starts; muevald announces as soon as it does (\(reason))")
    }

    fileprivate func clientChanged(_ client: OpaquePointer, _ state: AvahiClientState) {
        switch state {
        case AVAHI_CLIENT_S_RUNNING:
            if warnedAboutMissingDaemon { logger.notice("zeroconf: avahi-daemon is available, announcing") }
            warnedAboutMissingDaemon = false
            register(on: client)
        case AVAHI_CLIENT_S_COLLISION, AVAHI_CLIENT_S_REGISTERING:
            // The host name is being (re)registered: withdraw until the server runs again.
            if let group { avahi_entry_group_reset(group) }
        case AVAHI_CLIENT_CONNECTING:
            set(.waitingForAvahi)
            warnAboutMissingDaemon(because: "no avahi-daemon on the system bus")
        case AVAHI_CLIENT_FAILURE:
            let code = avahi_client_errno(client)
            if code == Int32(AVAHI_ERR_DISCONNECTED), !stopped {
                // avahi-daemon went away (restart, upgrade): start over with a new client,
                // which waits for the daemon to come back.
                logger.warning("zeroconf: lost avahi-daemon; announcing again as soon as it is back")
                if let group { avahi_entry_group_free(group) }
                group = nil
                avahi_client_free(client)
                self.client = nil
                set(.waitingForAvahi)
                warnedAboutMissingDaemon = true
                connectOrRetry()
            } else {
                let error = AvahiError(code: code, context: "Avahi client failed")
                logger.error("zeroconf: \(error)")
                set(.failed(reason: error.description))
            }
        default:
            break
        }
    }

    private func register(on client: OpaquePointer) {
        if group == nil {
            group = avahi_entry_group_new(client, publisherGroupCallback, Unmanaged.passUnretained(self).toOpaque())
        }
        guard let group else {
            fail(AvahiError(code: avahi_client_errno(client), context: "cannot create an Avahi entry group"))
            return
        }
        avahi_entry_group_reset(group)
        let list = Self.stringList(announcement.txt)
        defer { avahi_string_list_free(list) }
        for type in announcement.types {
            let code = avahi_entry_group_add_service_strlst(
                group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiPublishFlags(0), announcement.name, type, nil, nil,
                announcement.port, list)
            if code == Int32(AVAHI_ERR_COLLISION) {
                // Taken by a service on this very host: pick the next name and start over.
                rename(after: announcement.name)
                register(on: client)
                return
            }
            if code < 0 {
                fail(AvahiError(code: code, context: "cannot add service type \(type)"))
                return
            }
        }
        let code = avahi_entry_group_commit(group)
        if code < 0 {
            fail(AvahiError(code: code, context: "cannot commit the announcement"))
            return
        }
        set(.registering(name: announcement.name))
    }

    fileprivate func groupChanged(_ group: OpaquePointer, _ state: AvahiEntryGroupState) {
        switch state {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            logger.notice("zeroconf: announced \"\(announcement.name)\" as \(announcement.types.joined(separator: ", ")) on port \(announcement.port)")
            set(.announced(name: announcement.name))
        case AVAHI_ENTRY_GROUP_COLLISION:
            rename(after: announcement.name)
            if let client = avahi_entry_group_get_client(group) { register(on: client) }
        case AVAHI_ENTRY_GROUP_FAILURE:
            let client = avahi_entry_group_get_client(group)
            fail(AvahiError(code: client.map(avahi_client_errno) ?? Int32(AVAHI_ERR_FAILURE), context: "announcement failed"))
        default:
            break
        }
    }

    private func rename(after taken: String) {
        guard let alternative = avahi_alternative_service_name(taken) else { return }
        announcement.name = String(cString: alternative)
        avahi_free(alternative)
        logger.warning("zeroconf: the name \"\(taken)\" is taken on the network; announcing as \"\(announcement.name)\"")
    }

    private func fail(_ error: AvahiError) {
        logger.error("zeroconf: \(error)")
        set(.failed(reason: error.description))
    }

    private func set(_ state: AnnouncementState) {
        published.withLockedValue { $0 = state }
    }

    private static func stringList(_ txt: [(key: String, value: String)]) -> UnsafeMutablePointer<AvahiStringList>? {
        var list: UnsafeMutablePointer<AvahiStringList>?
        // avahi_string_list_add prepends: add in reverse to keep the order.
        for entry in txt.reversed() {
            list = avahi_string_list_add_pair(list, entry.key, entry.value)
        }
        return list
    }
}

private let publisherClientCallback: AvahiClientCallback = { client, state, userdata in
    guard let client, let userdata else { return }
    Unmanaged<ZeroconfPublisher>.fromOpaque(userdata).takeUnretainedValue().clientChanged(client, state)
}

private let publisherRetryCallback: AvahiTimeoutCallback = { _, userdata in
    guard let userdata else { return }
    Unmanaged<ZeroconfPublisher>.fromOpaque(userdata).takeUnretainedValue().retryConnect()
}

private let publisherGroupCallback: AvahiEntryGroupCallback = { group, state, userdata in
    guard let group, let userdata else { return }
    Unmanaged<ZeroconfPublisher>.fromOpaque(userdata).takeUnretainedValue().groupChanged(group, state)
}
