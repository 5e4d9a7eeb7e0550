// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "muEval",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "muevald", targets: ["muevald"]),
        .executable(name: "muevalctl", targets: ["muevalctl"]),
        .executable(name: "muevalsim", targets: ["muevalsim"]),
        // For the separate Benchmarks/ package (`make bench`), which depends on this one by path.
        .library(name: "WireProtocol", targets: ["WireProtocol"]),
        .library(name: "JournalStorage", targets: ["JournalStorage"]),
        .library(name: "DeviceSimulator", targets: ["DeviceSimulator"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
    ],
    targets: [
        // System libraries (Debian's -dev packages; `make deps` installs them).
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // Without pkgConfig: avahi-client.pc adds -D_REENTRANT, which SwiftPM refuses with a warning.
        .systemLibrary(name: "CAvahi", providers: [.apt(["libavahi-client-dev"])]),
        // zlib compresses the simulator's PNG screenshots.
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),

        // The wire protocol: XML event messages from capture libraries, byte-level and incremental.
        .target(name: "WireProtocol", dependencies: [
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),
        // Journal storage: the catalog and one SQLite file per evaluation session.
        .target(name: "JournalStorage", dependencies: [
            "CSQLite", "WireProtocol",
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // The capture server: TCP connections from devices, sessions, ingest with backpressure.
        .target(name: "CaptureServer", dependencies: [
            "WireProtocol", "JournalStorage",
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOExtras", package: "swift-nio-extras"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // Control: the Unix control socket, its JSON protocol, server and client.
        .target(name: "Control", dependencies: [
            "CaptureServer", "JournalStorage",
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOExtras", package: "swift-nio-extras"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // Zeroconf: announcing the capture service through avahi-daemon, and finding it.
        .target(name: "Zeroconf", dependencies: [
            "CAvahi",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // The daemon: configuration, logging and the lifecycle that ties the services together.
        .target(name: "Daemon", dependencies: [
            "CaptureServer", "Control", "JournalStorage", "Zeroconf",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            .product(name: "TOMLKit", package: "TOMLKit"),
        ]),
        .executableTarget(name: "muevald", dependencies: [
            "Daemon",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .executableTarget(name: "muevalctl", dependencies: [
            "Control", "WireProtocol", "Zeroconf", "ReportCritique",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // The device simulator: scenarios, events, PNG screenshots, and a reliable sender (muevalsim).
        .target(name: "DeviceSimulator", dependencies: [
            "CZlib", "WireProtocol", "Zeroconf",
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),
        .executableTarget(name: "muevalsim", dependencies: [
            "DeviceSimulator",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // Starts a real muevald on a temporary directory, for integration tests.
        .target(name: "DaemonTestSupport", dependencies: [
            "Control", "WireProtocol", "JournalStorage",
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),

        // Analysis: interpreters on a blackboard turn a session file into results (docs/REPORTS.md).
        .target(name: "SessionAnalysis", dependencies: [
            "JournalStorage", "WireProtocol",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),
        // Critique: the static HTML report written from the analysis results.
        .target(name: "ReportCritique", dependencies: ["SessionAnalysis", "JournalStorage"]),
        // Synthetic session files with known contents, for the analysis tests and the report benchmark.
        .target(name: "SessionAnalysisTestSupport", dependencies: [
            "JournalStorage", "WireProtocol", "DeviceSimulator",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),
        // Times analysis and report of a synthetic one-hour session (`make bench`).
        .executableTarget(name: "ReportBenchmark", dependencies: ["ReportCritique", "SessionAnalysisTestSupport"]),

        .testTarget(name: "WireProtocolTests", dependencies: ["WireProtocol"]),
        .testTarget(name: "JournalStorageTests", dependencies: ["JournalStorage", "WireProtocol"]),
        // The device connection without sockets: its state machine, and its handler on an EmbeddedChannel.
        .testTarget(name: "CaptureServerTests", dependencies: [
            "CaptureServer", "WireProtocol", "JournalStorage",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "DaemonTests", dependencies: ["Daemon", "CaptureServer", "JournalStorage"]),
        .testTarget(name: "DeviceSimulatorTests", dependencies: ["DeviceSimulator", "WireProtocol"]),
        .testTarget(name: "SessionAnalysisTests", dependencies: [
            "SessionAnalysis", "ReportCritique", "SessionAnalysisTestSupport", "JournalStorage", "WireProtocol",
        ]),
        // Depends on the executables so that `swift test` builds the binaries it starts.
        .testTarget(name: "IntegrationTests", dependencies: [
            "DaemonTestSupport", "WireProtocol", "Control", "JournalStorage", "Zeroconf", "muevald", "muevalctl",
            "muevalsim", "DeviceSimulator",
        ]),
    ]
)
