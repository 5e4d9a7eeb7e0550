@testable import CaptureServer
import SessionModel
import Testing

/// Web devices per address, without sockets, on a simulated clock: a lab's room of 200 phones behind one address
/// connects and reconnects under the defaults; past a cap the refusal names its setting and when to try again.
@Suite struct WebDeviceAdmissionTests {
    private func limits(perAddress: Int = 400, perMinute: Int = 3000, tracked: Int = 10_000) -> WebDeviceLimits {
        var limits = WebDeviceLimits()
        limits.maxPerAddress = perAddress
        limits.connectionsPerMinute = perMinute
        limits.trackedAddresses = tracked
        return limits
    }

    @Test func aRoomOfTwoHundredPhonesBehindOneAddressConnectsReconnectsAndOpensPagesUnderTheDefaults() {
        var admission = WebDeviceAdmission()
        let defaults = WebDeviceLimits()
        // All 200 within two seconds, then each again (its Wi-Fi blinked) before its old socket is gone.
        for phone in 0..<400 {
            #expect(admission.admit("192.0.2.1", limits: defaults, now: Double(phone) / 100) == nil)
        }
        for _ in 0..<200 { admission.closed("192.0.2.1") }
        // The next minute, each phone opens a page every 4 s, each page a new socket in place of the last.
        for second in 0..<60 {
            for phone in 0..<50 {
                let refusal = admission.admit("192.0.2.1", limits: defaults, now: 60 + Double(second) + Double(phone) / 50)
                #expect(refusal == nil)
                admission.closed("192.0.2.1")
            }
        }
        #expect(admission.connected("192.0.2.1") == 200)
    }

    @Test func pastTheAddressesCapA429NamesTheSettingAndItsPlaceComesBackWhenOneCloses() throws {
        var admission = WebDeviceAdmission()
        let limits = limits(perAddress: 3)
        for _ in 0..<3 { #expect(admission.admit("10.0.0.7", limits: limits, now: 0) == nil) }
        let decision = admission.admit("10.0.0.7", limits: limits, now: 1)
        let refusal = try #require(decision)
        #expect(refusal.reason == .webPerAddress)
        #expect(refusal.reason.httpStatus == 429)
        #expect(refusal.retryAfter == Refusal.capRetryAfter)
        #expect(refusal.message == "3 web devices are connected from 10.0.0.7 already, the most one address may have (capture.web_max_per_address): try again in 30 s")
        // Another address is not this one's cap.
        #expect(admission.admit("10.0.0.8", limits: limits, now: 1) == nil)
        admission.closed("10.0.0.7")
        #expect(admission.admit("10.0.0.7", limits: limits, now: 2) == nil)
        // A close of nothing admitted (it never counted) frees nothing.
        admission.closed("10.0.0.99")
        #expect(admission.connected("10.0.0.99") == 0)
    }

    @Test func pastTheMinutesCapA429SaysWhenTheMinuteEndsAndTheNextMinuteAdmitsAgain() throws {
        var admission = WebDeviceAdmission()
        let limits = limits(perMinute: 5)
        for second in 0..<5 {
            #expect(admission.admit("10.0.0.7", limits: limits, now: 100 + Double(second)) == nil)
            admission.closed("10.0.0.7")
        }
        let decision = admission.admit("10.0.0.7", limits: limits, now: 120.5)
        let refusal = try #require(decision)
        #expect(refusal.reason == .webRate)
        #expect(refusal.retryAfter == 40, "the minute began at 100")
        #expect(refusal.message.contains("(capture.web_connections_per_minute): try again in 40 s"))
        // Refused ones are not counted: the next minute admits five again.
        #expect(admission.admit("10.0.0.7", limits: limits, now: 160) == nil)
    }

    @Test func anIPv6HostCountsByItsSlash64() throws {
        var admission = WebDeviceAdmission()
        let limits = limits(perAddress: 2)
        #expect(admission.admit("2001:db8:1:2::a", limits: limits, now: 0) == nil)
        #expect(admission.admit("2001:db8:1:2::b", limits: limits, now: 0) == nil)
        let decision = admission.admit("2001:db8:1:2:ffff::1", limits: limits, now: 0)
        let refusal = try #require(decision)
        #expect(refusal.reason == .webPerAddress)
        #expect(admission.admit("2001:db8:1:3::a", limits: limits, now: 0) == nil, "another /64")
        admission.closed("2001:db8:1:2::b")
        #expect(admission.connected("2001:db8:1:2::1") == 1)
    }

    @Test func theMinutesTableIsBoundedAndForgetsTheOldestMinute() {
        var admission = WebDeviceAdmission()
        let limits = limits(perMinute: 1, tracked: 2)
        for (index, address) in ["10.0.0.1", "10.0.0.2", "10.0.0.3"].enumerated() {
            #expect(admission.admit(address, limits: limits, now: Double(index)) == nil)
            admission.closed(address)
        }
        // 10.0.0.1's minute was forgotten to make room for 10.0.0.3's: it is admitted again within its minute.
        #expect(admission.admit("10.0.0.1", limits: limits, now: 10) == nil)
        #expect(admission.admit("10.0.0.3", limits: limits, now: 10)?.reason == .webRate)
    }

    @Test func originsAreRefusedWith403NamingTheSetting() throws {
        var web = WebCaptureSettings()
        web.origins = ["https://app.example"]
        #expect(web.refusal(origin: "https://app.example", host: "lab:28080") == nil)
        #expect(web.refusal(origin: "http://lab:28080", host: "lab:28080") == nil, "the console's own pages")
        #expect(web.refusal(origin: nil, host: "lab:28080") == nil, "no browser's page")
        let refusal = try #require(web.refusal(origin: "https://elsewhere.example", host: "lab:28080"))
        #expect(refusal.reason.httpStatus == 403)
        #expect(refusal.message == "pages from https://elsewhere.example may not capture here: add it to capture.web_origins")
    }
}
