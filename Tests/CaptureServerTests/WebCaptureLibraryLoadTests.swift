@testable import CaptureServer
import Foundation
import Logging
import NIOCore
import Testing

/// What muevald reads of the web capture library's folder at start (`WebCaptureLibrary.load`): `capture.js` and
/// the `.js` files under `capture/`, keyed by the path each is served at, within bounds. Real folders on the disk.
struct WebCaptureLibraryLoadTests {
    /// A library folder in a temporary directory: `files` by relative path, removed by `body`'s end.
    private func withFolder(_ files: [String: String], _ body: (URL) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("web-library-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        for (path, text) in files {
            let file = folder.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: file)
        }
        try body(folder)
    }

    private func text(_ library: WebCaptureLibrary, _ path: String) -> String? {
        library.file(at: path).map { String(buffer: $0) }
    }

    @Test func servesTheEntryAndEveryModuleUnderCaptureByItsPath() throws {
        try withFolder([
            "capture.js": "import './capture/plist.js'",
            "capture/plist.js": "export const plist = 1",
            "capture/sources/fingers.js": "export const fingers = 2",
            "capture.d.ts": "export {}",
            "package.json": "{}",
            "capture/README.md": "not a module",
            "capture/.#plist.js": "an editor's lock",
            "capture/.cache/old.js": "a tool's",
            "other/x.js": "beside the library",
        ]) { folder in
            // A link out of the folder, named like a module: not followed.
            try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("capture/passwd.js").path,
                                                       withDestinationPath: "/etc/passwd")
            let library = try #require(WebCaptureLibrary.load(from: folder, logger: Logger(label: "test")))
            #expect(Set(library.files.keys) == ["/capture.js", "/capture/plist.js", "/capture/sources/fingers.js"])
            #expect(text(library, "/capture/sources/fingers.js") == "export const fingers = 2")
            #expect(text(library, "/capture.js") == "import './capture/plist.js'")
            for path in ["/capture/../capture.js", "/capture/%2e%2e/capture.js", "capture/plist.js", "/capture//plist.js", "/capture/passwd.js"] {
                #expect(library.file(at: path) == nil, "\(path)")
            }
        }
    }

    @Test func aFolderWithoutCaptureJSIsNoLibrary() throws {
        try withFolder(["capture/plist.js": "export const plist = 1"]) { folder in
            #expect(WebCaptureLibrary.load(from: folder, logger: Logger(label: "test")) == nil)
        }
    }

    @Test func pastItsBoundsOnlyTheEntryIsServed() throws {
        let modules = Dictionary(uniqueKeysWithValues: (1...5).map { ("capture/m\($0).js", String(repeating: "x", count: 100)) })
        try withFolder(modules.merging(["capture.js": "entry"]) { $1 }) { folder in
            let whole = try #require(WebCaptureLibrary.load(from: folder, logger: Logger(label: "test")))
            #expect(whole.files.count == 6)
            let tooMany = try #require(WebCaptureLibrary.load(from: folder, maxEntries: 4, logger: Logger(label: "test")))
            #expect(Set(tooMany.files.keys) == ["/capture.js"])
            let tooLarge = try #require(WebCaptureLibrary.load(from: folder, maxBytes: 300, logger: Logger(label: "test")))
            #expect(Set(tooLarge.files.keys) == ["/capture.js"])
        }
    }
}
