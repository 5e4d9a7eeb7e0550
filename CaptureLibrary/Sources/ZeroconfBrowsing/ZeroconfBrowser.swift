internal import CAvahi
internal import NIOConcurrencyHelpers

/// A service found on the network, resolved to host, addresses, port and TXT record.
public struct DiscoveredService: Codable, Sendable, Equatable {
    public var name: String
    public var type: String
    public var domain: String
    public var host: String
    public var addresses: [String]
    public var port: Int
    public var txt: [String: String]

    public init(name: String, type: String, domain: String, host: String, addresses: [String], port: Int, txt: [String: String]) {
        self.name = name
        self.type = type
        self.domain = domain
        self.host = host
        self.addresses = addresses
        self.port = port
        self.txt = txt
    }
}

/// Browses for a service type and resolves what it finds, through avahi-daemon
/// (`muevalctl discover`, the device simulator).
public final class ZeroconfBrowser: @unchecked Sendable {
    private let poll: OpaquePointer
    private var client: OpaquePointer?
    private var browser: OpaquePointer?
    /// Outlives no poll thread: the browser holds it and joins that thread in deinit.
    private let findings = Findings()

    private init() throws {
        guard let poll = avahi_threaded_poll_new() else {
            throw AvahiError(code: Int32(AVAHI_ERR_NO_MEMORY), context: "cannot create Avahi's event loop")
        }
        self.poll = poll
    }

    deinit {
        avahi_threaded_poll_stop(poll)
        if let browser { avahi_service_browser_free(browser) }
        if let client { avahi_client_free(client) }
        avahi_threaded_poll_free(poll)
    }

    /// Browses for `type` and returns every service resolved within `timeout` seconds, or
    /// earlier when avahi-daemon says it has reported everything it knows and all are resolved.
    public static func browse(type: String, timeout: Double) async throws -> [DiscoveredService] {
        let browser = try ZeroconfBrowser()
        try browser.start(type: type)
        let deadline = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < deadline {
            let progress = browser.findings.progress.withLockedValue { $0 }
            if let failure = progress.failure { throw failure }
            if progress.allForNow, progress.pendingResolutions == 0, !progress.services.isEmpty { break }
            try await Task.sleep(for: .milliseconds(25))
        }
        return browser.findings.progress.withLockedValue { $0.services.values.sorted { $0.name < $1.name } }
    }

    private func start(type: String) throws {
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        var error: Int32 = 0
        guard let client = avahi_client_new(avahi_threaded_poll_get(poll), AvahiClientFlags(0), { _, _, _ in }, nil, &error) else {
            throw AvahiError(code: error, context: error == Int32(AVAHI_ERR_NO_DAEMON)
                             ? "avahi-daemon is not running (start it: systemctl start avahi-daemon)" : "cannot reach avahi-daemon")
        }
        self.client = client
        let userdata = Unmanaged.passUnretained(findings).toOpaque()
        guard let browser = avahi_service_browser_new(client, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), type, nil,
                                                      AvahiLookupFlags(0), browserCallback, userdata) else {
            throw AvahiError(code: avahi_client_errno(client), context: "cannot browse for \(type)")
        }
        self.browser = browser
        guard avahi_threaded_poll_start(poll) == 0 else {
            throw AvahiError(code: Int32(AVAHI_ERR_FAILURE), context: "cannot start Avahi's event loop thread")
        }
    }
}

/// What Avahi's callbacks reach, on its poll thread. Not the browser itself: a callback holds
/// its target while it runs, and were that the last reference to the browser, the browser's
/// deinit would stop the poll thread from that very thread, which Avahi aborts on
/// (`avahi_threaded_poll_stop: !pthread_equal(...)`).
private final class Findings: Sendable {
    struct Progress {
        var services: [String: DiscoveredService] = [:]
        var pendingResolutions = 0
        var allForNow = false
        var failure: AvahiError?
    }
    let progress = NIOLockedValueBox(Progress())

    func browsed(_ browser: OpaquePointer, _ interface: AvahiIfIndex, _ proto: AvahiProtocol,
                             _ event: AvahiBrowserEvent, _ name: String, _ type: String, _ domain: String) {
        switch event {
        case AVAHI_BROWSER_NEW:
            let client = avahi_service_browser_get_client(browser)
            let userdata = Unmanaged.passUnretained(self).toOpaque()
            if avahi_service_resolver_new(client, interface, proto, name, type, domain, AvahiProtocol(AVAHI_PROTO_UNSPEC),
                                          AvahiLookupFlags(0), resolverCallback, userdata) != nil {
                progress.withLockedValue { $0.pendingResolutions += 1 }
            }
        case AVAHI_BROWSER_REMOVE:
            progress.withLockedValue { $0.services[name] = nil }
        case AVAHI_BROWSER_ALL_FOR_NOW:
            progress.withLockedValue { $0.allForNow = true }
        case AVAHI_BROWSER_FAILURE:
            let client = avahi_service_browser_get_client(browser)
            progress.withLockedValue { $0.failure = AvahiError(code: client.map(avahi_client_errno) ?? Int32(AVAHI_ERR_FAILURE), context: "browsing failed") }
        default:
            break
        }
    }

    func resolved(_ event: AvahiResolverEvent, name: String, type: String, domain: String, host: String,
                              address: String?, port: UInt16, txt: [String: String]) {
        progress.withLockedValue { progress in
            progress.pendingResolutions -= 1
            guard event == AVAHI_RESOLVER_FOUND else { return }
            var service = progress.services[name]
                ?? DiscoveredService(name: name, type: type, domain: domain, host: host, addresses: [], port: Int(port), txt: txt)
            if let address, !service.addresses.contains(address) { service.addresses.append(address) }
            progress.services[name] = service
        }
    }
}

private let browserCallback: AvahiServiceBrowserCallback = { browser, interface, proto, event, name, type, domain, _, userdata in
    guard let browser, let userdata else { return }
    Unmanaged<Findings>.fromOpaque(userdata).takeUnretainedValue().browsed(
        browser, interface, proto, event, name.map { String(cString: $0) } ?? "", type.map { String(cString: $0) } ?? "",
        domain.map { String(cString: $0) } ?? "")
}

private let resolverCallback: AvahiServiceResolverCallback = { resolver, _, _, event, name, type, domain, host, address, port, txt, _, userdata in
    defer { if let resolver { avahi_service_resolver_free(resolver) } }
    guard let userdata else { return }
    var text: String?
    if let address {
        var buffer = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX))
        avahi_address_snprint(&buffer, buffer.count, address)
        text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    var record: [String: String] = [:]
    var entry = txt
    while let current = entry {
        var key: UnsafeMutablePointer<CChar>?
        var value: UnsafeMutablePointer<CChar>?
        if avahi_string_list_get_pair(current, &key, &value, nil) == 0, let key {
            record[String(cString: key)] = value.map { String(cString: $0) } ?? ""
            avahi_free(key)
            if let value { avahi_free(value) }
        }
        entry = avahi_string_list_get_next(current)
    }
    Unmanaged<Findings>.fromOpaque(userdata).takeUnretainedValue().resolved(
        event, name: name.map { String(cString: $0) } ?? "", type: type.map { String(cString: $0) } ?? "",
        domain: domain.map { String(cString: $0) } ?? "", host: host.map { String(cString: $0) } ?? "",
        address: text, port: port, txt: record)
}
