internal import Foundation
internal import NIOCore

/// One file of the console's pages, held in memory.
struct ConsoleAsset: Sendable {
    let bytes: ByteBuffer
    let contentType: String
    /// A content hash: a reload after an upgrade gets the new file, an unchanged one costs a 304-sized answer.
    let etag: String
}

/// The pages, scripts and styles shipped as the module's resources (Sources/ConsoleServer/Resources).
///
/// Read once at start-up: they are a few hundred kilobytes, and serving from memory keeps file I/O
/// off the event loops. No CDN, no build step: the files in the repository are what the browser runs.
struct ConsoleAssets: Sendable {
    private let files: [String: ConsoleAsset]

    init(directory: URL) throws {
        var texts: [String: [UInt8]] = [:]
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        for name in names where !name.hasPrefix(".") {
            texts[name] = try [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))
        }
        // Each page is its body in the shared frame; the raw bodies and templates are never served
        // (/assets refuses .html), so the composed page takes the body's name.
        func text(_ name: String) throws -> String {
            guard let bytes = texts[name] else { throw ConsoleError.assetsMissing(directory.appendingPathComponent(name).path) }
            return String(decoding: bytes, as: UTF8.self)
        }
        let frame = try ConsoleFrame(frame: text("frame.html"), navigation: text("navigation.html"))
        for page in ConsolePage.all {
            var body = try text(page.file)
            for fragment in ConsolePage.fragments {
                body = body.replacingOccurrences(of: "{{include:\(fragment)}}", with: try text(fragment))
            }
            texts[page.file] = try Array(frame.compose(page, body: body).utf8)
        }
        texts[ConsoleVocabulary.moduleName] = Array(ConsoleVocabulary.module.utf8)
        var files: [String: ConsoleAsset] = [:]
        for (name, bytes) in texts {
            files[name] = ConsoleAsset(bytes: ByteBuffer(bytes: bytes), contentType: Self.contentType(of: name),
                                       etag: "\"\(Self.digest(bytes))\"")
        }
        self.files = files
    }

    /// Where `make install` puts the pages, relative to the executable: PREFIX/share/mueval/console.
    static var installed: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("../share/mueval/console").standardizedFileURL
    }

    /// The installed pages, else the module's resources in the build folder (`swift build`, `make run`).
    /// Checked in this order because SwiftPM's `Bundle.module` ends the process when its bundle is missing.
    static func bundled() throws -> ConsoleAssets {
        if FileManager.default.fileExists(atPath: installed.appendingPathComponent("login.html").path) {
            return try ConsoleAssets(directory: installed)
        }
        guard let directory = Bundle.module.url(forResource: "Resources", withExtension: nil) else {
            throw ConsoleError.assetsMissing(Bundle.module.bundlePath)
        }
        return try ConsoleAssets(directory: directory)
    }

    subscript(name: String) -> ConsoleAsset? { files[name] }

    static func contentType(of name: String) -> String {
        switch name.split(separator: ".").last {
        case "html": "text/html; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "json": "application/json"
        default: "application/octet-stream"
        }
    }

    /// FNV-1a, 64 bits: an ETag needs to change with the content, not to resist an attacker.
    private static func digest(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }
}
