internal import Foundation
internal import SessionModel
internal import WireProtocol

/// How many web devices one address may have (`capture.web_max_per_address`, `capture.web_connections_per_minute`):
/// sized so that a lab's room of 200 phones behind one address (a lab's Wi-Fi, an office's NAT) is never refused,
/// while one address still cannot take every connection the console has (docs/SECURITY.md, "Refusals that say why").
public struct WebDeviceLimits: Sendable, Equatable {
    /// Web devices connected at once from one address: two per phone of a room of 200, since a phone whose
    /// Wi-Fi blinked connects again before the console has closed its old socket (within two pings, 60 s).
    public var maxPerAddress = 400
    /// Web devices that may connect from one address in a minute: a room of 200 phones each opening a page every
    /// 4 s (a web app of many pages connects again on each), or all of them reconnecting fifteen times.
    public var connectionsPerMinute = 3000
    /// Addresses whose minute is remembered at once; beyond, the one whose minute began longest ago is forgotten.
    public var trackedAddresses = 10_000

    public init() {}
}

/// Whether a web device from an address may connect now, as a value: the devices each address has connected
/// (until `closed`) against `maxPerAddress`, and those it connected this minute (a fixed window from the first
/// one) against `connectionsPerMinute`. An IPv6 address counts by its /64, which one host gets. No I/O, no clock.
struct WebDeviceAdmission: Sendable {
    private struct Window {
        var start: Double
        var count: Int
    }

    private var open: [String: Int] = [:]
    private var windows: [String: Window] = [:]

    /// What an address counts as: an IPv4 address, an IPv6 /64, or text that is no address as it is.
    static func key(_ address: String) -> String {
        NetworkAddress.limitKeys(address).first?.name ?? address
    }

    /// Admits a web device from `address` (it counts until `closed(address)`), or says why not.
    mutating func admit(_ address: String, limits: WebDeviceLimits, now: Double) -> Refusal? {
        let key = Self.key(address)
        let connected = open[key, default: 0]
        if connected >= limits.maxPerAddress {
            return Refusal(.webPerAddress, "\(connected) web devices are connected from \(address) already, the most one address may have (capture.web_max_per_address): try again in \(Refusal.capRetryAfter) s",
                           retryAfter: Refusal.capRetryAfter)
        }
        var window = windows[key].flatMap { now - $0.start < 60 ? $0 : nil } ?? Window(start: now, count: 0)
        if window.count >= limits.connectionsPerMinute {
            let wait = max(1, Int(saturating: (window.start + 60 - now).rounded(.up)))
            return Refusal(.webRate, "\(window.count) web devices connected from \(address) within a minute, the most one address may (capture.web_connections_per_minute): try again in \(wait) s",
                           retryAfter: wait)
        }
        if windows[key] == nil, windows.count >= max(1, limits.trackedAddresses) { makeRoom(limits.trackedAddresses, now: now) }
        window.count += 1
        windows[key] = window
        open[key] = connected + 1
        return nil
    }

    /// A web device `admit` let in has gone.
    mutating func closed(_ address: String) {
        let key = Self.key(address)
        guard let connected = open[key] else { return }
        open[key] = connected > 1 ? connected - 1 : nil
    }

    /// Web devices connected from `address` now.
    func connected(_ address: String) -> Int { open[Self.key(address), default: 0] }

    /// Minutes that ended go first; else the one that began longest ago. Linear, and only when the table is full.
    private mutating func makeRoom(_ tracked: Int, now: Double) {
        windows = windows.filter { now - $0.value.start < 60 }
        if windows.count >= max(1, tracked), let oldest = windows.min(by: { $0.value.start < $1.value.start })?.key {
            windows[oldest] = nil
        }
    }
}
