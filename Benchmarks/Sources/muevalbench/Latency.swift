import Foundation

/// Percentiles of a set of delays, in milliseconds.
struct Percentiles {
    var p50: Double
    var p99: Double
    var max: Double
    var count: Int

    init?(seconds delays: [Double]) {
        guard !delays.isEmpty else { return nil }
        let sorted = delays.sorted()
        func at(_ fraction: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))] * 1000 }
        p50 = at(0.50)
        p99 = at(0.99)
        max = sorted.last! * 1000
        count = sorted.count
    }
}

/// Receipt to durable, per event: from the `received` stamp muevald stored with it to the moment the
/// first `<ack>` covering its seq reached the device. The ack is sent only after the commit that
/// holds the event, so this is an upper bound of receipt→commit: it adds the commit report's trip
/// to the connection's event loop, the ack's write and loopback, and nothing else. It leaves out
/// the time bytes wait in socket buffers before muevald reads them (backpressure), which is the
/// sender's queue, not the server's latency.
enum DurableLatency {
    static func measure(sessionFile: String, acks: [[AckPoint]]) throws -> [Double] {
        let query = Process()
        query.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        query.arguments = ["-readonly", "-separator", " ", sessionFile, "SELECT seq, received FROM events WHERE seq IS NOT NULL"]
        let pipe = Pipe()
        query.standardOutput = pipe
        try query.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        query.waitUntilExit()
        guard query.terminationStatus == 0 else { throw BenchError("sqlite3 could not read \(sessionFile) (is the sqlite3 package installed? `make deps`)") }
        var delays: [Double] = []
        delays.reserveCapacity(output.count / 24)
        for line in output.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "))
            guard fields.count == 2, let seq = Int64(String(decoding: fields[0], as: UTF8.self)),
                  let received = Double(String(decoding: fields[1], as: UTF8.self)) else { continue }
            let connection = Int(seq >> 32) - 1
            let number = Int(seq & 0xFFFF_FFFF)
            guard acks.indices.contains(connection), let ack = firstAck(covering: number, in: acks[connection]) else { continue }
            delays.append(ack.time - received)
        }
        return delays
    }

    /// The first ack whose count reaches `number` (acks are in increasing order).
    private static func firstAck(covering number: Int, in acks: [AckPoint]) -> AckPoint? {
        var low = 0, high = acks.count
        while low < high {
            let middle = (low + high) / 2
            if acks[middle].count >= number { high = middle } else { low = middle + 1 }
        }
        return low < acks.count ? acks[low] : nil
    }
}
