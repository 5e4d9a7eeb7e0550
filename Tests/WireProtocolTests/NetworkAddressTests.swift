@testable import WireProtocol
import Testing

/// Addresses and ranges as the per-address limits and `console.trusted_proxies` read them.
@Suite struct NetworkAddressTests {
    @Test func addressesParseAsTheCLibraryReadsThem() {
        #expect(NetworkAddress("192.0.2.1")?.bytes == [192, 0, 2, 1])
        #expect(NetworkAddress("::ffff:192.0.2.1")?.bytes == [192, 0, 2, 1], "IPv4-mapped is IPv4")
        #expect(NetworkAddress("[2001:db8::1]")?.description == "2001:db8::1")
        #expect(NetworkAddress("fe80::1%eth0")?.description == "fe80::1")
        #expect(NetworkAddress("[fe80::1%25eth0]")?.description == "fe80::1")
        for text in ["", "192.0.2", "192.0.2.256", "1.2.3.4.5", "2001:db8:::1", "unknown", "::1]",
                     "192.0.2.1%eth0", "fe80::1%", "fe80::1%eth 0", "fe80::1%eth0%1"] {
            #expect(NetworkAddress(text) == nil, "\(text)")
        }
    }

    @Test func anIPv6AddressCountsByItsSlash64AndSlash48() {
        let keys = NetworkAddress.limitKeys("2001:db8:aa:bb:1:2:3:4")
        #expect(keys.map(\.name) == ["2001:db8:aa:bb::/64", "2001:db8:aa::/48"])
        #expect(keys.map(\.isNetwork) == [false, true])
        #expect(NetworkAddress.limitKeys("192.0.2.1").map(\.name) == ["192.0.2.1"])
        #expect(NetworkAddress.limitKeys("unix socket").map(\.name) == ["unix socket"])
    }

    @Test func rangesContainWhatTheirPrefixSays() throws {
        func contains(_ range: String, _ address: String) throws -> Bool {
            try #require(NetworkRange(range)).contains(try #require(NetworkAddress(address)))
        }
        #expect(try contains("10.0.0.0/8", "10.255.1.2"))
        #expect(try !contains("10.0.0.0/8", "11.0.0.1"))
        #expect(try !contains("10.0.0.0/8", "::a00:1"), "an IPv6 address is never in an IPv4 range")
        #expect(try contains("fd00::1", "fd00::1"))
        #expect(try !contains("fd00::1", "fd00::2"))
        #expect(try contains("0.0.0.0/0", "203.0.113.9"))
        #expect(NetworkRange("10.1.2.3/8")?.description == "10.0.0.0/8")
        #expect(NetworkRange("::ffff:10.0.0.0/104")?.description == "10.0.0.0/8")
        for text in ["10.0.0.0/33", "fd00::/129", "10.0.0.0/-1", "10.0.0.0/", "/8", "host.example/8", "::ffff:10.0.0.0/95"] {
            #expect(NetworkRange(text) == nil, "\(text)")
        }
    }
}
