// swift-tools-version:6.1
import PackageDescription

// `make bench`: a package of its own, so that the benchmark library and its dependencies never
// slow down the main package's build (`make build`, `make test`).
let package = Package(
    name: "muEvalBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "muEval", path: ".."),
        .package(path: "../CaptureLibrary"),
        // MallocInterposer counts allocations without linking jemalloc.
        // Already in muEval's graph: the hour profile builds its events as ordered dictionaries.
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
        // The web phones' WebSockets (webphones); already in muEval's graph.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // The load profiles (touch events, a mixed session, a one-hour session) as byte templates, shared by every benchmark.
        .target(name: "BenchProfiles", dependencies: [
            .product(name: "WireProtocol", package: "muEval"),
            .product(name: "DeviceSimulator", package: "muEval"),
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),
        // End to end: runs muevald and a discarding sink under load, writes docs/BENCHMARKS.md.
        .executableTarget(name: "muevalbench", dependencies: ["BenchProfiles", .product(name: "WireProtocol", package: "muEval")]),
        // Many web phones on one event loop (Tests/Load/web_phones.py in Swift): Benchmarks/phones_at_once.py
        // --client swift, so that the client takes a fraction of the CPU muevald needs.
        .executableTarget(name: "webphones", dependencies: [
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
        ]),
        // Micro: wire decoding and journal inserts on one core, with allocation counts (ordo-one/benchmark).
        .executableTarget(
            name: "Ingest",
            dependencies: [
                "BenchProfiles",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "WireProtocol", package: "muEval"),
                .product(name: "GroupCommit", package: "muEval"),
                .product(name: "JournalStorage", package: "muEval"),
            ],
            path: "Benchmarks/Ingest",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Micro: the capture library's record call on the app's thread, with allocation counts.
        .executableTarget(
            name: "Capture",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MuEvalCapture", package: "CaptureLibrary"),
            ],
            path: "Benchmarks/Capture",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
