@testable import ConsoleServer
import Testing

/// What a console connection may do before its first request, without sockets: which deadline runs,
/// and where the first request head ends, across reads.
@Suite struct FirstRequestWatchTests {
    /// Feeds `text`; whether it completed the first request head.
    private func feed(_ watch: inout FirstRequestWatch, _ text: String) -> Bool {
        watch.received(Array(text.utf8))
    }

    @Test func withTLSTheHandshakeDeadlineRunsFirstThenTheHeaderDeadline() {
        var limits = ConsoleConnectionLimits()
        limits.tlsHandshakeTimeout = 10
        limits.headerTimeout = 30
        var watch = FirstRequestWatch(tls: true)
        #expect(watch.deadline(limits) == 10)
        // Bytes before the handshake completed are TLS's, never a request.
        let early = feed(&watch, "GET / HTTP/1.1\r\n\r\n")
        #expect(!early)
        let completed = watch.handshakeCompleted()
        #expect(completed)
        #expect(watch.deadline(limits) == 30)
        // The handshake's deadline passing afterwards closes nothing.
        let late = watch.expired(.handshake)
        #expect(late == nil)
    }

    @Test func theHeadEndsAtTheBlankLineEvenSplitAcrossReads() {
        var watch = FirstRequestWatch(tls: false)
        let first = feed(&watch, "GET / HTTP/1.1\r\nHost: x\r")
        let second = feed(&watch, "\n\r")
        let third = feed(&watch, "\n")
        #expect(!first && !second && third)
        #expect(watch.phase == .requested)
        let expired = watch.expired(.head)
        #expect(expired == nil)
        let neverRequested = watch.closed()
        #expect(!neverRequested)
    }

    @Test func bareLineFeedsEndAHeadToo() {
        var watch = FirstRequestWatch(tls: false)
        let ended = feed(&watch, "GET / HTTP/1.0\nHost: x\n\n")
        #expect(ended)
    }

    @Test func aSilentConnectionIsClosedOnceWithTheReason() {
        var watch = FirstRequestWatch(tls: false)
        let ended = feed(&watch, "GET / HTTP/1.1\r\n")
        #expect(!ended)
        let reason = watch.expired(.head)
        #expect(reason?.contains("console.header_timeout") == true)
        let again = watch.expired(.head)
        #expect(again == nil)
        let neverRequested = watch.closed()
        #expect(neverRequested)
    }

    @Test func aZeroTimeoutRunsNoDeadline() {
        var limits = ConsoleConnectionLimits()
        limits.headerTimeout = 0
        #expect(FirstRequestWatch(tls: false).deadline(limits) == nil)
    }
}
