import Benchmark
import MuEvalCapture

// The cost of one `record` call on the app's calling thread (issue 21): time and allocations per
// call, for a touch and for a view change with a 48 KB screenshot. The library's task meanwhile
// tries a server that is not there (nothing listens on port 1), so nothing is sent: what is measured
// is the call alone. Every iteration records 1,000 events into a fresh capture.

private let callsPerIteration = 1_000

private func started() throws -> CaptureManager {
    let capture = CaptureManager()
    var configuration = CaptureConfiguration(appId: "bench.capture")
    configuration.server = .address(ServerAddress(host: "127.0.0.1", port: 1))
    try capture.startCapture(configuration)
    return capture
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident],
        warmupIterations: 2,
        maxDuration: .seconds(3),
        maxIterations: 200
    )

    let screenshot = [UInt8](repeating: 0x5A, count: 48 * 1024)
    let profiles: [(String, CaptureEvent)] = [
        ("touch", .touch(.began, x: 160, y: 240, view: "PostsViewController")),
        ("view change with a 48 KB screenshot", .viewAppeared("PostViewController", stack: ["PostsViewController", "PostViewController"],
                                                             screenshot: screenshot)),
    ]
    for (name, event) in profiles {
        Benchmark("CaptureManager.record, \(name), 1,000 calls") { benchmark in
            for _ in benchmark.scaledIterations {
                let capture = try started()
                benchmark.startMeasurement()
                for _ in 0..<callsPerIteration { capture.record(event) }
                benchmark.stopMeasurement()
                await capture.stopCapture(timeout: 0)
            }
        }
    }
}
