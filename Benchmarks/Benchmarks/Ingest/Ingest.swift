import BenchProfiles
import Benchmark
import Foundation
import GroupCommit
import JournalStorage
import WireProtocol

// The two stages of ingest on one core, without sockets: decoding the wire bytes (what each
// connection's event loop does) and inserting decoded events into a session file (what each
// session's writer queue does). Every iteration handles 1,000 events, so a count per iteration
// divided by 1,000 is a count per event; MB/s and events/s are reported as custom metrics.

private let eventsPerIteration = 1_000

private func decodeAll(_ bytes: [UInt8]) -> Int {
    var decoder = WireDecoder()
    decoder.append(bytes)
    var events = 0
    while let result = decoder.next() {
        if case .success(.event) = result { events += 1 }
    }
    precondition(events == eventsPerIteration, "decoded \(events) of \(eventsPerIteration) events")
    return events
}

private func decoded(_ bytes: [UInt8]) -> [JournalRecord] {
    var decoder = WireDecoder()
    decoder.append(bytes)
    var records: [JournalRecord] = []
    while case .success(.event(let event))? = decoder.next() {
        records.append(JournalRecord(device: "bench-device", received: 1_298_155_386, event: event, origin: 1))
    }
    return records
}

/// Records of one iteration: distinct seqs, and distinct blob keys so that no screenshot is
/// skipped as already stored.
private func numbered(_ records: [JournalRecord], iteration: Int) -> [JournalRecord] {
    records.enumerated().map { index, record in
        guard case .event(var event) = record.content else { return record }
        event.seq = Int64(iteration * eventsPerIteration + index)
        event.blobs = event.blobs.map { blob in
            var blob = blob
            blob.sha256 = String(format: "%016x", iteration) + blob.sha256.dropFirst(16)
            return blob
        }
        var numbered = record
        numbered.content = .event(event)
        return numbered
    }
}

private enum Throughput {
    static let megabytes = BenchmarkMetric.custom("MB/s", polarity: .prefersLarger, useScalingFactor: false)
    static let events = BenchmarkMetric.custom("K events/s", polarity: .prefersLarger, useScalingFactor: false)

    static func record(_ benchmark: Benchmark, bytes: Int, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        benchmark.measurement(megabytes, Int(Double(bytes) / seconds / 1e6))
        benchmark.measurement(events, Int(Double(eventsPerIteration) / seconds / 1e3))
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident, Throughput.megabytes, Throughput.events],
        warmupIterations: 2,
        maxDuration: .seconds(3),
        maxIterations: 1_000
    )

    for profile in [LoadProfile.touch, LoadProfile.mixed] {
        let bytes = profile.stream(count: eventsPerIteration)
        Benchmark("Wire decoding, \(profile.name), 1,000 events") { benchmark in
            for _ in benchmark.scaledIterations {
                let start = ContinuousClock.now
                blackHole(decodeAll(bytes))
                Throughput.record(benchmark, bytes: bytes.count, since: start)
            }
        }

        let records = decoded(bytes)
        let directory = NSTemporaryDirectory() + "mueval-ingest-bench-\(getpid())"
        Benchmark("Journal insert, \(profile.name), 1,000 events per group commit") { benchmark in
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let writer = try JournalWriter(path: directory + "/\(profile.name).sqlite", limits: JournalWriterLimits()) { _ in }
            for iteration in benchmark.scaledIterations {
                let batch = numbered(records, iteration: iteration)
                benchmark.startMeasurement()
                let start = ContinuousClock.now
                _ = writer.append(batch)
                try await writer.flush()
                Throughput.record(benchmark, bytes: bytes.count, since: start)
                benchmark.stopMeasurement()
            }
            try await writer.close()
        }
    }
}
