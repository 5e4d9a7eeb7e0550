// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "muEval",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "muevald", targets: ["muevald"]),
        .executable(name: "muevalctl", targets: ["muevalctl"]),
        .executable(name: "muevalsim", targets: ["muevalsim"]),
        .executable(name: "plainnote", targets: ["plainnote"]),
        // For the separate Benchmarks/ package (`make bench`), which depends on this one by path.
        .library(name: "WireProtocol", targets: ["WireProtocol"]),
        .library(name: "JournalStorage", targets: ["JournalStorage"]),
        .library(name: "GroupCommit", targets: ["GroupCommit"]),
        .library(name: "DeviceSimulator", targets: ["DeviceSimulator"]),
        // The capture library an app links to be evaluated (docs/CAPTURE-LIBRARY.md).
        .library(name: "MuEvalCapture", targets: ["MuEvalCapture"]),
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
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
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
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // The value types every layer shares: sessions, devices, stored events, export formats.
        .target(name: "SessionModel"),
        // Journal storage: the catalog and one SQLite file per evaluation session (schema, reading, exporting).
        .target(name: "JournalStorage", dependencies: [
            "CSQLite", "SessionModel", "WireProtocol",
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // Group commit: the single writer of each session file, with a bounded queue (the daemon's write path).
        .target(name: "GroupCommit", dependencies: [
            "JournalStorage",
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // Import of sessions recorded elsewhere: IMUT logs, GPX tracks, muEval's own exports (docs/IMPORT.md).
        .target(name: "SessionImport", dependencies: [
            "JournalStorage", "SessionModel", "WireProtocol",
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // Replication of what muevald stores into a shared PostgreSQL (docs/POSTGRES.md).
        .target(name: "Replication", dependencies: [
            "JournalStorage", "SessionModel", "WireProtocol",
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // The control socket's protocol, which both sides use: requests, replies, tail lines, counters, line limits, where the socket is.
        .target(name: "ControlProtocol", dependencies: [
            "SessionModel", "WireProtocol",
        ]),
        // The capture server: TCP connections from devices, sessions, ingest with backpressure, live tail.
        .target(name: "CaptureServer", dependencies: [
            "ControlProtocol", "GroupCommit", "JournalStorage", "SessionModel", "WireProtocol",
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOTLS", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // Offline speech recognition of think-aloud audio (PocketSphinx): transcripts and exclamations.
        .systemLibrary(name: "CPocketSphinx", pkgConfig: "pocketsphinx", providers: [.apt(["libpocketsphinx-dev"])]),
        // Any audio file to 16 kHz mono for the recogniser, over Debian's libavformat/libavcodec/libswresample.
        .target(name: "CAudioDecode", linkerSettings: [
            .linkedLibrary("avformat"), .linkedLibrary("avcodec"), .linkedLibrary("swresample"), .linkedLibrary("avutil"),
        ]),
        .target(name: "SpeechRecognition", dependencies: [
            "CAudioDecode", "CPocketSphinx",
        ]),
        // muevald's background transcription of stopped sessions' audio.
        .target(name: "TranscriptionService", dependencies: [
            "JournalStorage", "SessionModel", "SpeechRecognition",
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // The control socket's server side: access check and the commands, run against the capture server.
        .target(name: "ControlService", dependencies: [
            "CaptureServer", "ControlProtocol", "JournalStorage", "SessionImport", "SessionModel", "WireProtocol",
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOExtras", package: "swift-nio-extras"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // The control socket's client (muevalctl, tests).
        .target(name: "ControlClient", dependencies: [
            "ControlProtocol", "SessionModel",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOExtras", package: "swift-nio-extras"),
        ]),
        // Zeroconf: announcing the capture service through avahi-daemon, and finding it.
        .target(name: "Zeroconf", dependencies: [
            "CAvahi",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // The web console (the thesis's Mobile Monitor): pages, JSON API, WebSockets and /metrics over HTTP (docs/CONSOLE.md).
        .target(name: "ConsoleServer", dependencies: [
            "CaptureServer", "ControlProtocol", "JournalStorage", "ReportCritique", "SessionAnalysis", "SessionModel", "StudyAnalysis", "WireProtocol",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "HummingbirdTLS", package: "hummingbird"),
            .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], resources: [.copy("Resources")],
        // The generated resource accessor imports Foundation without an access level; this makes it internal like ours.
        swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault")]),
        // The daemon: configuration, logging and the lifecycle that ties the services together.
        .target(name: "Daemon", dependencies: [
            "CaptureServer", "ConsoleServer", "ControlProtocol", "ControlService", "JournalStorage", "Replication", "SessionImport", "SessionModel", "SpeechRecognition", "TranscriptionService", "WireProtocol", "Zeroconf",
            .product(name: "TOMLKit", package: "TOMLKit"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
        ]),
        .executableTarget(name: "muevald", dependencies: [
            "Daemon",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "muevalctl", dependencies: [
            "ControlClient", "ControlProtocol", "JournalStorage", "Replication", "ReportCritique", "SessionAnalysis", "SessionImport", "SessionModel", "StudyAnalysis", "StudyMetrics", "WireProtocol", "Zeroconf",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // The device simulator: scenarios, events, PNG screenshots, and a reliable sender (muevalsim).
        // The thesis's CaptureLibrary: kept small, it needs the wire encoder and NIO only (and Avahi's
        // browser on Linux); never the journal, the server or SQLite.
        .target(name: "MuEvalCapture", dependencies: [
            "WireProtocol",
            .target(name: "Zeroconf", condition: .when(platforms: [.linux])),
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        // The thesis's PlainNote host app as a command-line stand-in: it links MuEvalCapture alone.
        .executableTarget(name: "plainnote", dependencies: [
            "MuEvalCapture",
        ], path: "Examples/plainnote"),
        .target(name: "DeviceSimulator", dependencies: [
            "CZlib", "MuEvalCapture", "WireProtocol",
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),
        .executableTarget(name: "muevalsim", dependencies: [
            "DeviceSimulator", "MuEvalCapture", "WireProtocol",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // Starts a real muevald on a temporary directory, for integration tests.
        .target(name: "DaemonTestSupport", dependencies: [
            "ControlClient", "ControlProtocol", "JournalStorage", "SessionModel", "WireProtocol",
            .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ]),

        // Analysis: interpreters on a blackboard turn a session file into results (docs/REPORTS.md).
        .target(name: "SessionAnalysis", dependencies: [
            "JournalStorage", "SessionModel", "WireProtocol",
        ]),
        // Study analysis: attempts, outcomes and numbers across a study's sessions, and its CSV export.
        .target(name: "StudyAnalysis", dependencies: [
            "SessionAnalysis", "SessionModel", "StudyMetrics", "WireProtocol",
        ]),
        // Critique: the static HTML report written from the analysis results.
        .target(name: "ReportCritique", dependencies: [
            "JournalStorage", "SessionAnalysis", "SessionModel", "StudyAnalysis", "StudyMetrics", "WireProtocol",
        ]),
        // Study metrics: completion rates, time on task, SUS and the comparison of iterations, with small-sample intervals (docs/STUDIES.md).
        .target(name: "StudyMetrics"),
        // Synthetic session files with known contents, for the analysis tests and the report benchmark.
        .target(name: "SessionAnalysisTestSupport", dependencies: [
            "DeviceSimulator", "GroupCommit", "JournalStorage", "SessionModel", "WireProtocol",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),
        // Times analysis and report of a synthetic one-hour session (`make bench`).
        .executableTarget(name: "SpeechBenchmark", dependencies: [
            "SpeechRecognition", "WireProtocol",
        ]),
        .executableTarget(name: "ReportBenchmark", dependencies: [
            "ReportCritique", "SessionAnalysis", "SessionAnalysisTestSupport", "SessionModel",
        ]),

        .testTarget(name: "SpeechRecognitionTests", dependencies: [
            "SpeechRecognition", "WireProtocol",
        ]),
        .testTarget(name: "WireProtocolTests", dependencies: [
            "WireProtocol",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),
        .testTarget(name: "SessionImportTests", dependencies: [
            "JournalStorage", "SessionImport", "WireProtocol",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),
        .testTarget(name: "JournalStorageTests", dependencies: [
            "GroupCommit", "JournalStorage", "SessionModel", "WireProtocol",
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // The device connection without sockets: its state machine, and its handler on a NIOAsyncTestingChannel.
        .testTarget(name: "CaptureServerTests", dependencies: [
            "CaptureServer", "ControlProtocol", "GroupCommit", "JournalStorage", "SessionModel", "WireProtocol",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
        ]),
        .testTarget(name: "ReplicationUnitTests", dependencies: [
            "Replication",
        ]),
        .testTarget(name: "DaemonTests", dependencies: [
            "CaptureServer", "Daemon", "JournalStorage", "WireProtocol",
        ]),
        .testTarget(name: "DeviceSimulatorTests", dependencies: [
            "DeviceSimulator", "WireProtocol",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),
        .testTarget(name: "SessionAnalysisTests", dependencies: [
            "ReportCritique", "SessionAnalysis", "SessionAnalysisTestSupport", "SessionModel", "StudyAnalysis", "StudyMetrics", "WireProtocol",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),
        .testTarget(name: "StudyMetricsTests", dependencies: [
            "StudyMetrics",
        ]),
        // The study analysis on synthetic study sessions: attempts, outcomes, metrics, problems, the CSV export.
        .testTarget(name: "StudyAnalysisTests", dependencies: [
            "SessionAnalysis", "SessionAnalysisTestSupport", "SessionModel", "StudyAnalysis", "StudyMetrics", "WireProtocol",
        ]),
        // The control socket's server side in-process: a real registry, a real Unix socket, the real client.
        .testTarget(name: "ControlServiceTests", dependencies: [
            "CaptureServer", "ControlClient", "ControlProtocol", "ControlService", "GroupCommit", "JournalStorage", "SessionImport", "SessionModel", "WireProtocol",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        .testTarget(name: "MuEvalCaptureTests", dependencies: [
            "MuEvalCapture", "WireProtocol",
            .target(name: "Zeroconf", condition: .when(platforms: [.linux])),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        // The Zeroconf module in-process, against an avahi-daemon in a network namespace of the test's own.
        .testTarget(name: "ZeroconfUnitTests", dependencies: [
            "DaemonTestSupport", "Zeroconf",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The console's access rules and message framing, without sockets.
        .testTarget(name: "ConsoleServerTests", dependencies: [
            "ConsoleServer", "ControlProtocol", "SessionModel", "WireProtocol",
            .product(name: "NIOCore", package: "swift-nio"),
        ]),
        // Depends on the executables so that `swift test` builds the binaries it starts.
        .testTarget(name: "IntegrationTests", dependencies: [
            "ControlClient", "ControlProtocol", "DaemonTestSupport", "DeviceSimulator", "JournalStorage", "SessionModel", "WireProtocol", "Zeroconf", "muevalctl", "muevald", "muevalsim", "plainnote",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ], exclude: ["Fixtures"]),
    ]
)
