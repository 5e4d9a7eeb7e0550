@testable import ConsoleServer
import Foundation
import Testing

/// What a browser sends, at its most absurd: every header, query and body value gets an answer
/// (a range, a 416, a 400 with a message), never a trap.
@Suite struct ConsoleInputTests {
    private let total: Int64 = 1000
    private let limit: Int64 = 100

    private func range(_ header: String?, total: Int64 = 1000) -> ByteRangeRequest.Answer {
        ByteRangeRequest.answer(header, total: total, limit: limit)
    }

    @Test func everydayRangesAreServedAPieceAtATime() {
        #expect(range(nil) == .whole)
        #expect(range("bytes=0-9") == .partial(0..<10))
        #expect(range("bytes=990-") == .partial(990..<1000))
        #expect(range("bytes=0-") == .partial(0..<100), "at most `limit` bytes per answer")
        #expect(range("bytes=-10") == .partial(990..<1000))
        #expect(range("bytes=-5000") == .partial(0..<100), "a suffix longer than the file is all of it")
        #expect(range("bytes=995-5000") == .partial(995..<1000), "a last position past the end ends at the end")
        #expect(range("BYTES=1-1") == .partial(1..<2), "range units are case-insensitive")
    }

    /// Each of these trapped (a Range with lower > upper, `last + 1` overflowing) or was answered wrongly.
    @Test func rangesPastTheEndAreUnsatisfiable() {
        #expect(range("bytes=1000-") == .unsatisfiable)
        #expect(range("bytes=5000-") == .unsatisfiable)
        #expect(range("bytes=5000-6000") == .unsatisfiable)
        #expect(range("bytes=9223372036854775807-") == .unsatisfiable)
        #expect(range("bytes=99999999999999999999999-") == .unsatisfiable)
        #expect(range("bytes=-0") == .unsatisfiable, "an empty suffix selects nothing")
        #expect(range("bytes=0-", total: 0) == .unsatisfiable, "nothing of an empty file can be in a range")
        #expect(range("bytes=-5", total: 0) == .unsatisfiable)
    }

    @Test func hugePositionsNeverOverflow() {
        #expect(range("bytes=0-9223372036854775807") == .partial(0..<100))
        #expect(range("bytes=0-99999999999999999999999999") == .partial(0..<100))
        #expect(range("bytes=-9223372036854775807") == .partial(0..<100))
        #expect(range("bytes=-99999999999999999999999999") == .partial(0..<100))
        #expect(range("bytes=9223372036854775806-9223372036854775807", total: .max) ==
                .partial(9_223_372_036_854_775_806..<9_223_372_036_854_775_807))
        #expect(ByteRangeRequest.answer("bytes=10-", total: .max, limit: .max) == .partial(10..<Int64.max), "lower + limit overflows")
    }

    @Test func whatThisServerDoesNotTakeApartGetsTheWholeFile() {
        for header in ["bytes=5-1", "bytes=0-1,5-9", "bytes=0-1, 900-", "items=0-1", "bytes=", "bytes=-", "bytes=a-b",
                       "bytes=+1-2", "bytes=1e3-", "bytes=-nan", "bytes=0x10-", "bytes=--5", "bytes=1-2-3", "", "bytes",
                       String(repeating: "bytes=0-1,", count: 10_000)] {
            #expect(range(header) == .whole, "\(header.prefix(40))")
        }
    }

    @Test func absurdQueryNumbersAreRefusedNamingTheParameter() throws {
        #expect(try ConsoleInput.integer(nil, name: "limit", in: 1...Int.max) == nil)
        #expect(try ConsoleInput.integer("", name: "limit", in: 1...Int.max) == nil)
        #expect(try ConsoleInput.integer("25", name: "limit", in: 1...Int.max) == 25)
        #expect(try ConsoleInput.integer("9223372036854775807", name: "after", in: 0...Int64.max) == .max)
        for text in ["NaN", "nan", "inf", "1e300", "1.5", "99999999999999999999", "-1", "0", " 5", "0x10", "5abc", String(repeating: "9", count: 5000)] {
            let error = #expect(throws: ConsoleError.self, "limit=\(text.prefix(20))") {
                try ConsoleInput.integer(text, name: "limit", in: 1...Int.max)
            }
            #expect(error?.status == .badRequest)
            #expect(error?.description.hasPrefix("limit must be a whole number of at least 1, not \"") == true, "\(String(describing: error))")
            #expect((error?.description.count ?? 0) < 120, "the value is quoted short: \(String(describing: error))")
        }
        #expect(throws: ConsoleError.badRequest("iteration must be a whole number from 1 to 9, not \"10\"")) {
            try ConsoleInput.integer("10", name: "iteration", in: 1...9)
        }
    }

    @Test func absurdTimesAndDurationsInABodyAreRefusedWithTheirRange() throws {
        #expect(try ConsoleInput.time(nil, field: "t") == nil)
        #expect(try ConsoleInput.time(1_700_000_000.5, field: "t") == 1_700_000_000.5)
        for value in [Double.nan, .infinity, -.infinity, 1e300, -1e300, 1e18, -1] {
            #expect(throws: ConsoleError.self, "t = \(value)") { try ConsoleInput.time(value, field: "t") }
        }
        let error = #expect(throws: ConsoleError.self) { try ConsoleInput.time(1e300, field: "t") }
        #expect(error?.description.contains("\"t\" is 1e+300, outside its range: a time from 1970") == true, "\(String(describing: error))")
        #expect(try ConsoleInput.checked(90, as: .duration, field: "timeLimit") == 90)
        #expect(throws: ConsoleError.self) { try ConsoleInput.checked(1e300, as: .duration, field: "timeLimit") }
        #expect(throws: ConsoleError.self) { try ConsoleInput.checked(-5, as: .duration, field: "timeLimit") }
    }

    /// JSON cannot carry NaN; numbers beyond a field's type fail to decode, and the message names the field.
    @Test func aBodyThatDoesNotDecodeIsDescribedByItsField() throws {
        func message<T: Decodable>(_ type: T.Type, _ json: String) -> String? {
            do {
                _ = try JSONDecoder().decode(T.self, from: Data(json.utf8))
                return nil
            } catch {
                return ConsoleInput.describe(error, body: Data(json.utf8))
            }
        }
        for json in [#"{"number": 1e300}"#, #"{"number": 99999999999999999999999}"#, #"{"number": 1.5}"#] {
            let text = try #require(message(NewIteration.self, json))
            #expect(text.hasSuffix("a number in it does not fit its field (a count, number or id is a whole number within 64 bits)"), "\(text)")
        }
        let nested = try #require(message(QuestionnaireRequest.self, #"{"responses": {"sus": [{"iteration": 1, "participant": "P", "items": [1, "x"]}]}}"#))
        #expect(nested.contains("`responses.sus[0].items[1]` must be a whole number"), "\(nested)")
        let nan = try #require(message(NoteRequest.self, #"{"t": NaN}"#))
        #expect(nan.hasPrefix("the request body is not the JSON this call takes"), "\(nan)")
        #expect(message(NoteRequest.self, #"{"t": 1e300}"#) == nil, "decodes; the range check refuses it")
    }

    @Test func onlyTheConsolesOwnHostNamesAreAnswered() {
        var settings = ConsoleSettings()
        settings.port = 28080
        let local = ConsoleHosts(settings: settings, machineName: "lab-pc")
        for host in ["127.0.0.1:28080", "localhost:28080", "LOCALHOST", "localhost.:28080", "[::1]:28080", "[::1]", "127.0.0.1"] {
            #expect(local.allows(host), "\(host)")
        }
        for host in [nil, "", "evil.example", "evil.example:28080", "lab-pc:28080", "127.0.0.1.evil.example", "localhost:abc",
                     "user@localhost", "[::1", "[::1]x", "localhost:123456", ":28080"] as [String?] {
            #expect(!local.allows(host), "\(host ?? "nil")")
        }

        settings.host = "0.0.0.0"
        settings.publicURL = "https://Lab.Example.org/mueval"
        settings.allowedHosts = ["tunnel.example", "[fd00::5]"]
        let open = ConsoleHosts(settings: settings, machineName: "lab-pc")
        for host in ["lab-pc:28080", "lab.example.org", "tunnel.example:443", "[fd00::5]:28080", "localhost:28080"] {
            #expect(open.allows(host), "\(host)")
        }
        #expect(!open.allows("evil.example"))
        #expect(!open.allows("0.0.0.0:28080"))

        settings.host = "192.168.1.10"
        #expect(ConsoleHosts(settings: settings, machineName: "lab-pc").allows("192.168.1.10:28080"))
        #expect(!ConsoleHosts(settings: settings, machineName: "lab-pc").allows("lab-pc:28080"))
    }
}
