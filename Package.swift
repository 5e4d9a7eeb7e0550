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
        // The capture library and what it shares with the server (its own package, so that an app resolves no server code).
        .package(path: "CaptureLibrary"),
    ],
    // Layers.ini puts every target below in a layer; `make test` checks each import against it (docs/DEVELOPMENT.md, "Layers").
    targets: [
        // System libraries (Debian's -dev packages; `make deps` installs them).
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // zlib compresses the simulator's PNG screenshots.
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // libqrencode draws the pool's enrolment link as a QR code (console, `muevalctl pool link --qr`).
        .systemLibrary(name: "CQRencode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // syncfs(2), which Glibc's Swift module does not declare: one sync for every session's commits (GroupCommit).
        .target(name: "CFileSystemSync"),
        .target(name: "QRCode", dependencies: [
            "CQRencode",
        ]),

        // The wire protocol: XML event messages from capture libraries, byte-level and incremental.
        .target(name: "WireProtocol", dependencies: [
            "SessionModel",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // A web page as a device recorded it (capture.js's `dom`), made safe by an allowlist to store and to replay.
        .target(name: "PageRecording", dependencies: [
            "SessionModel",
            "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),
        // The value types every layer shares: sessions, devices, stored events, export formats.
        .target(name: "SessionModel", dependencies: [
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
        ]),
        // Journal storage: the catalog and one SQLite file per evaluation session (schema, reading, exporting).
        .target(name: "JournalStorage", dependencies: [
            "CSQLite", "SessionModel", "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // Group commit: the single writer of each session file, with a bounded queue (the daemon's write path), and the
        // sync of the file system that the sessions' commits share.
        .target(name: "GroupCommit", dependencies: [
            "CFileSystemSync", "JournalStorage",
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // Import of sessions recorded elsewhere: IMUT logs, GPX tracks, muEval's own exports (docs/IMPORT.md).
        .target(name: "SessionImport", dependencies: [
            "JournalStorage", "PageRecording", "SessionModel", "WireProtocol",
            .product(name: "DescriptorIO", package: "CaptureLibrary"),
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // The shared PostgreSQL's read side (`muevalctl --from`) and what the replicator shares with it:
        // settings, the URL, the password file, the schema (docs/POSTGRES.md). No service lifecycle.
        .target(name: "ReplicationArchive", dependencies: [
            "JournalStorage", "SessionModel", "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),
        // The replicator service: copies what muevald stores into the shared PostgreSQL.
        .target(name: "Replication", dependencies: [
            "JournalStorage", "ReplicationArchive", "SessionCore", "SessionModel", "WireProtocol",
            .product(name: "MuEvalAsync", package: "CaptureLibrary"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // The control socket's protocol, which both sides use: requests, replies, tail lines, counters, line limits, where the socket is.
        .target(name: "ControlProtocol", dependencies: [
            "SessionModel", "WireProtocol",
        ]),
        // The tester pool (issue 32): the lab's consent text and profile form, testers' profiles in DATA/testers.sqlite,
        // and the quota sampling that recruits from it.
        .target(name: "TesterPool", dependencies: [
            "JournalStorage", "SessionModel",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // The session core: open sessions, device claim and pairing, studies, counters, the live tail, and the
        // one stream of lifecycle events the daemon's services follow. The adapters below (capture server,
        // control service, console) drive it; none depends on another.
        .target(name: "SessionCore", dependencies: [
            "BuildInfo", "GroupCommit", "JournalStorage", "PageRecording", "SessionModel", "TesterPool", "WireProtocol",
            .product(name: "MuEvalAsync", package: "CaptureLibrary"),
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // The capture server: TCP connections from devices, ingest with backpressure, acknowledgements.
        .target(name: "CaptureServer", dependencies: [
            "GroupCommit", "JournalStorage", "SessionCore", "SessionModel", "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOTLS", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // Offline speech recognition of think-aloud audio (PocketSphinx): transcripts and exclamations.
        .systemLibrary(name: "CPocketSphinx", pkgConfig: "pocketsphinx", providers: [.apt(["libpocketsphinx-dev"])]),
        // Any audio file to 16 kHz mono for the recogniser, over Debian's libavformat/libavcodec/libswresample.
        // What both decoders share: FFmpeg's libraries, loaded at first use (dlopen: linked, their ~140 libraries were
        // mapped at every start, 22 MB resident), and libavformat reading a phone's file through descriptor callbacks.
        .target(name: "CMediaInput"),
        .target(name: "CAudioDecode", dependencies: ["CMediaInput"]),
        .target(name: "SpeechRecognition", dependencies: [
            "CAudioDecode", "CPocketSphinx", "ChildScripts", "UnlinkedFiles",
            .product(name: "DescriptorIO", package: "CaptureLibrary"),
        ]),
        // The Python scripts the sandboxed children run (the face scan's, the Whisper recogniser's), and how they are started.
        .target(name: "ChildScripts", exclude: ["Python"]),
        // The face video (H.264 in MP4) to grey frames for the face scan, over the same libraries: the mov demuxer and
        // H.264 decoder alone, no protocol (docs/SECURITY.md, "Names and media from files and devices").
        .target(name: "CVideoDecode", dependencies: ["CMediaInput"]),
        // muevald's background transcription of stopped sessions' audio, which follows the sessions' lifecycle events.
        .target(name: "TranscriptionService", dependencies: [
            "JournalStorage", "SessionCore", "SessionModel", "SpeechRecognition",
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // The control socket's server side: access check and the commands, run against the session core.
        .target(name: "ControlService", dependencies: [
            "ControlProtocol", "JournalStorage", "SessionCore", "SessionImport", "SessionModel", "TesterPool", "WireProtocol",
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
        // Zeroconf: announcing the capture service through avahi-daemon, its TXT record following the sessions (finding it
        // is CaptureLibrary's ZeroconfBrowsing).
        .target(name: "Zeroconf", dependencies: [
            "BuildInfo", "SessionCore", "SessionModel",
            .product(name: "CAvahi", package: "CaptureLibrary"),
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "ZeroconfBrowsing", package: "CaptureLibrary"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // Sessions' reports: written on request and, for every session that stops, automatically (the daemon's service);
        // a recruited study's report when it completes (StudyCompletionService).
        .target(name: "SessionReports", dependencies: [
            "FaceAnalysis", "JournalStorage", "ReportCritique", "SessionAnalysis", "SessionCore", "SessionModel", "StudyAnalysis", "WireProtocol",
            .product(name: "MuEvalAsync", package: "CaptureLibrary"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // The web console (the thesis's Mobile Monitor): pages, JSON API, WebSockets and /metrics over HTTP (docs/CONSOLE.md).
        .target(name: "ConsoleServer", dependencies: [
            "BuildInfo", "JournalStorage", "PageRecording", "QRCode", "ReplayIndex", "ReportCritique", "SessionCore", "SessionModel", "StudyAnalysis", "TesterPool", "WireProtocol",
            .product(name: "MuEvalAsync", package: "CaptureLibrary"),
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
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
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOTLS", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], resources: [.copy("Resources")],
        // The generated resource accessor imports Foundation without an access level; this makes it internal like ours.
        swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault")]),
        // The daemon: configuration, logging and the lifecycle that ties the services together.
        .target(name: "Daemon", dependencies: [
            "BuildInfo", "CaptureServer", "ConsoleServer", "ControlProtocol", "ControlService", "FaceAnalysis", "GroupCommit", "JournalStorage", "Replication", "ReplicationArchive", "SessionCore", "SessionImport", "SessionModel", "SessionReports", "SpeechRecognition", "TesterPool", "TranscriptionService", "WireProtocol", "Zeroconf",
            .product(name: "DescriptorIO", package: "CaptureLibrary"),
            .product(name: "MuEvalAsync", package: "CaptureLibrary"),
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "TOMLKit", package: "TOMLKit"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
        ]),
        // Temporary files without a name, close-on-exec: the analysis's timeline scratch file, the transcription's vocabulary.
        .target(name: "UnlinkedFiles"),
        // Reads and writes of a descriptor that move every byte (EINTR, short counts), with one error type.
        // What `--version` prints: muEval's version and the commit the binary was built from (the BuildCommit plugin).
        .target(name: "BuildInfo", plugins: ["BuildCommit"]),
        .plugin(name: "BuildCommit", capability: .buildTool()),
        .executableTarget(name: "muevald", dependencies: [
            "BuildInfo", "Daemon",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "muevalctl", dependencies: [
            "BuildInfo", "ControlClient", "ControlProtocol", "JournalStorage", "QRCode", "ReplicationArchive", "ReportCritique", "SessionAnalysis", "SessionImport", "SessionModel", "StudyAnalysis", "StudyMetrics", "WireProtocol",
            .product(name: "DescriptorIO", package: "CaptureLibrary"),
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "ZeroconfBrowsing", package: "CaptureLibrary"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // The thesis's PlainNote host app as a command-line stand-in: it links MuEvalCapture (CaptureLibrary/) alone.
        .executableTarget(name: "plainnote", dependencies: [
            .product(name: "MuEvalCapture", package: "CaptureLibrary"),
        ], path: "Examples/plainnote"),
        // The device simulator: scenarios, events, PNG screenshots, and a reliable sender (muevalsim).
        .target(name: "DeviceSimulator", dependencies: [
            "CZlib", "SessionModel", "WireProtocol",
            .product(name: "MuEvalCapture", package: "CaptureLibrary"),
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),
        .executableTarget(name: "muevalsim", dependencies: [
            "BuildInfo", "DeviceSimulator", "WireProtocol",
            .product(name: "MuEvalCapture", package: "CaptureLibrary"),
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // Starts a real muevald on a temporary directory, for integration tests.
        .target(name: "DaemonTestSupport", dependencies: [
            "ControlClient", "ControlProtocol", "JournalStorage", "SessionModel", "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
        ]),

        // Analysis: interpreters on a blackboard turn a session file into results (docs/REPORTS.md).
        .target(name: "SessionAnalysis", dependencies: [
            "JournalStorage", "SessionModel", "UnlinkedFiles", "WireProtocol",
            .product(name: "DescriptorIO", package: "CaptureLibrary"),
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
        ]),
        // Study analysis: attempts, outcomes and numbers across a study's sessions, and its CSV export.
        .target(name: "StudyAnalysis", dependencies: [
            "JournalStorage", "SessionAnalysis", "SessionModel", "StudyMetrics", "WireProtocol",
        ]),
        // Critique: the static HTML report written from the analysis results.
        .target(name: "ReportCritique", dependencies: [
            "FaceAnalysis", "JournalStorage", "PageRecording", "SessionAnalysis", "SessionModel", "StudyAnalysis", "StudyMetrics", "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
        ]),
        // The replay index: the file of a session the console's Replay page reads by seeking, derived from the session like
        // its reports and kept beside them (docs/CONSOLE.md, "The replay index"): its format, writer and reader.
        .target(name: "ReplayIndex", dependencies: [
            "JournalStorage", "ReportCritique", "SessionModel", "WireProtocol",
            .product(name: "DescriptorIO", package: "CaptureLibrary"),
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
        ]),
        // The face scan: where the tester's face is in the face video, and its expressions, by OpenCV in a sandboxed python3 child.
        .target(name: "FaceAnalysis", dependencies: [
            "CVideoDecode", "ChildScripts", "WireProtocol",
            .product(name: "DescriptorIO", package: "CaptureLibrary"),
        ]),
        // Study metrics: completion rates, time on task, SUS and the comparison of iterations, with small-sample intervals (docs/STUDIES.md).
        .target(name: "StudyMetrics"),
        // Synthetic session files with known contents, for the analysis tests and the report benchmark.
        .target(name: "SessionAnalysisTestSupport", dependencies: [
            "DeviceSimulator", "GroupCommit", "JournalStorage", "SessionModel", "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),
        // Times the transcription of think-aloud audio and the exclamations found in it (`make bench`).
        .executableTarget(name: "SpeechBenchmark", dependencies: [
            "SpeechRecognition", "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
        ]),
        // Times analysis and report of a synthetic one-hour session (`make bench`).
        .executableTarget(name: "ReportBenchmark", dependencies: [
            "JournalStorage", "ReportCritique", "SessionAnalysis", "SessionAnalysisTestSupport", "SessionModel", "StudyAnalysis",
        ]),

        .testTarget(name: "SpeechRecognitionTests", dependencies: [
            "CMediaInput", "SpeechRecognition", "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
        ]),
        .testTarget(name: "PageRecordingTests", dependencies: [
            "PageRecording", "SessionModel", "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
        ]),
        .testTarget(name: "WireProtocolTests", dependencies: [
            "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),
        .testTarget(name: "SessionImportTests", dependencies: [
            "JournalStorage", "SessionImport", "WireProtocol",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),
        .testTarget(name: "JournalStorageTests", dependencies: [
            "GroupCommit", "JournalStorage", "SessionModel", "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // The device connection without sockets: its state machine, and its handler on a NIOAsyncTestingChannel.
        .testTarget(name: "CaptureServerTests", dependencies: [
            "CaptureServer", "GroupCommit", "JournalStorage", "SessionCore", "SessionModel", "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
        ]),
        // The tester pool on a temporary testers.sqlite: enrolment, settings, profiles, quota sampling.
        .testTarget(name: "TesterPoolTests", dependencies: [
            "JournalStorage", "SessionModel", "TesterPool",
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // The session core without the capture server: its state machine, the pairing limiter, the lifecycle stream.
        .testTarget(name: "SessionCoreTests", dependencies: [
            "GroupCommit", "JournalStorage", "SessionCore", "SessionModel", "TesterPool",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "ReplicationUnitTests", dependencies: [
            "Replication", "ReplicationArchive",
        ]),
        .testTarget(name: "DaemonTests", dependencies: [
            "CaptureServer", "Daemon", "JournalStorage", "WireProtocol",
        ]),
        .testTarget(name: "DeviceSimulatorTests", dependencies: [
            "ChildScripts", "DaemonTestSupport", "DeviceSimulator", "FaceAnalysis", "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),
        .testTarget(name: "SessionAnalysisTests", dependencies: [
            "DeviceSimulator", "ReportCritique", "SessionAnalysis", "SessionAnalysisTestSupport", "SessionModel", "StudyAnalysis", "StudyMetrics",
            "UnlinkedFiles", "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),
        .testTarget(name: "StudyMetricsTests", dependencies: [
            "StudyMetrics",
        ]),
        // Real pipes, socket pairs and temporary files: short writes, a reader gone, reads across the end of a file.
        .testTarget(name: "DescriptorIOTests", dependencies: [
            .product(name: "DescriptorIO", package: "CaptureLibrary"),
        ]),
        // The study analysis on synthetic study sessions: attempts, outcomes, metrics, problems, the CSV export.
        .testTarget(name: "StudyAnalysisTests", dependencies: [
            "JournalStorage", "ReportCritique", "SessionAnalysis", "SessionAnalysisTestSupport", "SessionModel", "StudyAnalysis", "StudyMetrics",
            "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
        ]),
        // The control socket's server side in-process: a real registry, a real Unix socket, the real client.
        .testTarget(name: "ControlServiceTests", dependencies: [
            "ControlClient", "ControlProtocol", "ControlService", "GroupCommit", "JournalStorage", "SessionCore", "SessionImport", "SessionModel", "TesterPool", "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        .testTarget(name: "MuEvalAsyncTests", dependencies: [
            .product(name: "MuEvalAsync", package: "CaptureLibrary"),
        ]),
        .testTarget(name: "MuEvalCaptureTests", dependencies: [
            "SessionModel", "WireProtocol",
            .target(name: "Zeroconf", condition: .when(platforms: [.linux])),
            .product(name: "MuEvalCapture", package: "CaptureLibrary"),
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        // The Zeroconf module in-process, against an avahi-daemon in a network namespace of the test's own.
        .testTarget(name: "ZeroconfUnitTests", dependencies: [
            "DaemonTestSupport", "Zeroconf",
            .product(name: "ZeroconfBrowsing", package: "CaptureLibrary"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Reports on disk, the automatic report of a stopped session and studies that complete, against a real registry.
        .testTarget(name: "SessionReportsTests", dependencies: [
            "GroupCommit", "JournalStorage", "PageRecording", "ReportCritique", "SessionAnalysis", "SessionAnalysisTestSupport", "SessionCore", "SessionModel", "SessionReports", "StudyAnalysis", "TesterPool", "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        .testTarget(name: "QRCodeTests", dependencies: [
            "QRCode",
        ]),
        // The replay index written from real session files and read back by its head and chunks.
        .testTarget(name: "ReplayIndexTests", dependencies: [
            "GroupCommit", "JournalStorage", "ReplayIndex", "ReportCritique", "SessionModel",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
        ]),
        // The console's access rules and message framing, without sockets.
        .testTarget(name: "ConsoleServerTests", dependencies: [
            "ConsoleServer", "SessionCore", "SessionModel", "WireProtocol",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),
        // Depends on the executables so that `swift test` builds the binaries it starts.
        .testTarget(name: "IntegrationTests", dependencies: [
            "BuildInfo", "ControlClient", "ControlProtocol", "DaemonTestSupport", "DeviceSimulator", "JournalStorage", "SessionModel", "WireProtocol", "Zeroconf", "muevalctl", "muevald", "muevalsim", "plainnote",
            .product(name: "MuEvalWire", package: "CaptureLibrary"),
            .product(name: "ZeroconfBrowsing", package: "CaptureLibrary"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ], exclude: ["Fixtures"]),
    ]
)
