@testable import Daemon
import Foundation
import Testing

/// The daemon's log writer: whoever logs never waits for stderr's reader.
@Suite struct LogWriterTests {
    /// A reader that stalls (a pipe nobody reads, full after one line): writing goes on at once,
    /// what does not fit the queue is dropped, and the count of dropped lines reaches the reader.
    @Test func aStalledReaderCostsLinesNotTime() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer {
            close(ends[0])
            close(ends[1])
        }
        let writer = LogWriter(fileDescriptor: ends[1], capacity: 3) { "dropped \($0)\n" }
        let line = String(repeating: "x", count: 100_000) + "\n"
        // Each line is larger than the pipe's buffer: the writer thread blocks on the first one it takes.
        for _ in 0..<20 { writer.write(line) }

        // Now the reader reads: every line is either written whole or counted as dropped.
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let deadline = Date().addingTimeInterval(10)
        func accounted() -> Int {
            let text = String(decoding: received, as: UTF8.self)
            let written = text.split(separator: "\n").filter { $0.count == 100_000 }.count
            let dropped = text.split(separator: "\n").filter { $0.hasPrefix("dropped ") }.compactMap { Int($0.dropFirst(8)) }.reduce(0, +)
            return written + dropped
        }
        while accounted() < 20, Date() < deadline {
            var entry = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) > 0 else {
                // The last dropped count goes out with the next line.
                writer.write("last\n")
                continue
            }
            let count = read(ends[0], &buffer, buffer.count)
            if count > 0 { received += buffer[0..<count] }
        }
        let text = String(decoding: received, as: UTF8.self)
        #expect(accounted() == 20)
        #expect(text.contains("dropped "), "with a queue of 3, most of 20 lines cannot wait")
    }
}
