// swift-tools-version:6.0
import PackageDescription

// The capture library an app links to be evaluated (docs/CAPTURE-LIBRARY.md), with no server code:
// an app that adds this package resolves swift-nio and swift-collections only. muEval's main package
// (one folder up) depends on it by path, for the library and for what the server shares with it.
let package = Package(
    name: "CaptureLibrary",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "MuEvalCapture", targets: ["MuEvalCapture"]),
        .library(name: "MuEvalWire", targets: ["MuEvalWire"]),
        .library(name: "MuEvalAsync", targets: ["MuEvalAsync"]),
        .library(name: "DescriptorIO", targets: ["DescriptorIO"]),
        // Linux: Avahi for the library's browser and the server's publisher (one package declares CAvahi).
        .library(name: "ZeroconfBrowsing", targets: ["ZeroconfBrowsing"]),
        .library(name: "CAvahi", targets: ["CAvahi"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        // Debian's libavahi-client-dev. Without pkgConfig: avahi-client.pc adds -D_REENTRANT, which SwiftPM
        // refuses with a warning.
        .systemLibrary(name: "CAvahi", providers: [.apt(["libavahi-client-dev"])]),

        // One waiter primitive: a value under a lock that tasks wait on until a condition holds.
        .target(name: "MuEvalAsync", dependencies: [
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // Reads and writes of a descriptor that move every byte (EINTR, short counts): the spool's, and the server's.
        .target(name: "DescriptorIO"),
        // The wire protocol as a device speaks it: the message types, the encoder, the reply reader.
        .target(name: "MuEvalWire", dependencies: [
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),
        // Zeroconf browsing through avahi-daemon (Linux): the library's server discovery, `muevalctl discover`.
        .target(name: "ZeroconfBrowsing", dependencies: [
            "CAvahi",
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // The capture library: records events, delivers them in order over a bounded queue, spools what
        // cannot be sent yet.
        .target(name: "MuEvalCapture", dependencies: [
            "DescriptorIO", "MuEvalAsync", "MuEvalWire",
            .target(name: "ZeroconfBrowsing", condition: .when(platforms: [.linux])),
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ]),
    ]
)
