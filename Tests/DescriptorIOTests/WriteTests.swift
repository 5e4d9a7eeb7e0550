import DescriptorIO
import Testing
#if canImport(Glibc)
import Glibc
#endif

struct WriteTests {
    /// A non-blocking pipe that a slow reader empties: each write(2) takes what fits (short counts), the
    /// next fails with EAGAIN, and poll(2) waits until the reader made room; every byte arrives once, in order.
    @Test func waitsWhileANonBlockingPipeIsFull() throws {
        let pipe = Endpoints.pipe(nonBlocking: true)
        let drain = pipe.drain(pauseMicroseconds: 100)
        let bytes = pattern(1 << 20)
        try Descriptor(pipe.writing).writeAll(bytes, waitingWhenFull: true)
        pipe.closeWriting()
        #expect(drain.received() == bytes)
    }

    /// Without waiting, a full non-blocking pipe is an error: EAGAIN, with what the reader can act on.
    @Test func failsWhenANonBlockingPipeIsFull() {
        let pipe = Endpoints.pipe(nonBlocking: true)
        #expect(throws: DescriptorIOError(.write, errno: EAGAIN)) {
            try Descriptor(pipe.writing).writeAll(pattern(1 << 20))
        }
    }

    /// A blocking pipe holds 64 KiB: a megabyte goes through as the reader takes it.
    @Test func writesMoreThanAPipeHolds() throws {
        let pipe = Endpoints.pipe()
        let drain = pipe.drain()
        let bytes = pattern(1 << 20)
        try Descriptor(pipe.writing).writeAll(bytes)
        pipe.closeWriting()
        #expect(drain.received() == bytes)
    }

    @Test func readerGoneFromAPipe() {
        let pipe = Endpoints.pipe()
        pipe.closeReading()
        let error = withoutSIGPIPE {
            #expect(throws: DescriptorIOError.self) { try Descriptor(pipe.writing).writeAll(pattern(10)) }
        }
        #expect(error?.errno == EPIPE)
        #expect(error?.isReaderGone == true)
        #expect(error?.description == "write: Broken pipe")
    }

    /// send(2) with MSG_NOSIGNAL: no SIGPIPE to block, the error alone.
    @Test func readerGoneFromASocket() {
        let sockets = Endpoints.socketPair()
        sockets.closeReading()
        let error = #expect(throws: DescriptorIOError.self) { try Descriptor(sockets.writing).sendAll(pattern(10)) }
        #expect(error?.operation == .send)
        #expect(error?.isReaderGone == true)
    }

    /// Any array of plain values goes out as its bytes, in memory order.
    @Test func sendsAnArrayOfSamples() throws {
        let sockets = Endpoints.socketPair()
        let drain = sockets.drain()
        let samples: [Int16] = (0..<50_000).map { Int16(truncatingIfNeeded: $0 * 7) }
        try Descriptor(sockets.writing).sendAll(samples)
        sockets.closeWriting()
        let received = drain.received()
        #expect(received.count == samples.count * 2)
        #expect(received.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) } == samples)
    }

    @Test func nothingToWrite() throws {
        let pipe = Endpoints.pipe()
        try Descriptor(pipe.writing).writeAll([UInt8]())
        try Descriptor(pipe.writing).sendAll(UnsafeRawBufferPointer(start: nil, count: 0))
    }
}
