@testable import PageRecording
import Testing

/// The console's cache of sanitised page records: a hit makes nothing again, and the bytes stay under the limit.
@Suite struct PageRecordCacheTests {
    @Test func aHitIsNotMadeAgainAndTheOldestGoFirst() {
        let cache = PageRecordCache(limitBytes: 10)
        var made = 0
        let four: () -> [UInt8]? = { made += 1; return [1, 2, 3, 4] }
        #expect(cache.record(path: "/a", id: 1, make: four) == [1, 2, 3, 4])
        #expect(cache.record(path: "/a", id: 1, make: four) == [1, 2, 3, 4])
        #expect(made == 1)
        _ = cache.record(path: "/b", id: 1, make: four)
        _ = cache.record(path: "/a", id: 2, make: four)
        #expect(cache.bytes == 8, "the first went to keep 12 bytes under 10")
        _ = cache.record(path: "/a", id: 1, make: four)
        #expect(made == 4, "the oldest was made again")
        // Larger than the whole cache: served, not kept; a record that cannot be made is nil and not kept.
        #expect(cache.record(path: "/a", id: 9, make: { Array(repeating: 0, count: 11) })?.count == 11)
        #expect(cache.record(path: "/a", id: 10, make: { nil }) == nil)
        #expect(cache.bytes <= 10)
    }
}
