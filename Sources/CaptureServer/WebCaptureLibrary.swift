internal import Foundation
internal import Logging
public import NIOCore

/// muEval for the web as muevald serves it, read once at start: `capture.js` at `/capture.js` and the ES modules
/// it imports, `capture/**/*.js`, at `/capture/…` (a browser resolves their relative imports against
/// `/capture.js`). A request finds a file only by its exact path in `files`, so no request path
/// (`/capture/../x`, `%2e%2e`, an absolute one) reaches anything else on the disk.
public struct WebCaptureLibrary: Sendable {
    /// Each file by the path it is served at: `/capture.js`, `/capture/plist.js`, `/capture/sources/fingers.js`.
    public let files: [String: ByteBuffer]

    public init(files: [String: ByteBuffer]) {
        self.files = files
    }

    /// Not installed: nothing to serve.
    public static let notInstalled = WebCaptureLibrary(files: [:])

    /// The file served at `path` (a request's path without its query, as it came: not decoded), or nil.
    public func file(at path: String) -> ByteBuffer? {
        files[path]
    }
}

extension WebCaptureLibrary {
    /// The entry module, in the library's folder.
    static let entry = "capture.js"
    /// The folder beside it holding the modules it imports, served at `/capture/`.
    static let modulesFolder = "capture"
    /// What `capture/` may hold (files and folders; the modules' bytes together): the library is ~100 KB in a few
    /// dozen files, so only a wrong folder (one with node_modules, a copy of the disk) reaches these, and they keep
    /// such a folder out of muevald's memory.
    static let maxEntries = 1_000
    static let maxBytes = 8 << 20

    /// The library in `folder` (`capture.js` and `capture/`), or nil when `folder` has no `capture.js`. Past the
    /// bounds only `capture.js` is served, with a warning: half of the modules would break pages less legibly.
    static func load(from folder: URL, maxEntries: Int = maxEntries, maxBytes: Int = maxBytes, logger: Logger) -> WebCaptureLibrary? {
        guard let entry = FileManager.default.contents(atPath: folder.appendingPathComponent(Self.entry).path) else { return nil }
        var files = ["/" + Self.entry: ByteBuffer(bytes: entry)]
        let modules = folder.appendingPathComponent(modulesFolder)
        do {
            files.merge(try Self.modules(in: modules.path, maxEntries: maxEntries, maxBytes: maxBytes, logger: logger)) { entry, _ in entry }
        } catch {
            logger.warning("\(modules.path) holds \(error): only capture.js is served, and pages cannot load its modules from here (is it muEval's capture library?)")
        }
        return WebCaptureLibrary(files: files)
    }

    /// The `.js` files under `root` by the path each is served at; past the bounds, why not. Only regular files:
    /// a symbolic link could lead out of the folder. Hidden ones (`.#plist.js`, `.cache/`) are an editor's or a
    /// tool's, not the library's.
    private static func modules(in root: String, maxEntries: Int, maxBytes: Int, logger: Logger) throws(Exceeded) -> [String: ByteBuffer] {
        guard let walk = FileManager.default.enumerator(atPath: root) else { return [:] }
        var found: [String: ByteBuffer] = [:]
        var entries = 0
        var bytes = 0
        while let relative = walk.nextObject() as? String {
            entries += 1
            guard entries <= maxEntries else { throw Exceeded("more than \(maxEntries) files and folders") }
            if relative.split(separator: "/").last?.hasPrefix(".") == true {
                walk.skipDescendants()
                continue
            }
            let path = root + "/" + relative
            guard relative.hasSuffix(".js"), let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                  attributes[.type] as? FileAttributeType == .typeRegular else { continue }
            // Counted before it is read, so that one huge file is never read whole.
            guard bytes + ((attributes[.size] as? NSNumber)?.intValue ?? 0) <= maxBytes else { throw Exceeded(bytes: maxBytes) }
            guard let data = FileManager.default.contents(atPath: path) else {
                logger.warning("cannot read \(path): pages that import it will not load")
                continue
            }
            bytes += data.count
            guard bytes <= maxBytes else { throw Exceeded(bytes: maxBytes) }
            found["/\(modulesFolder)/\(relative)"] = ByteBuffer(bytes: data)
        }
        return found
    }

    /// The bound a folder went past, in words.
    struct Exceeded: Error, CustomStringConvertible {
        let description: String

        init(_ description: String) {
            self.description = description
        }

        init(bytes: Int) {
            self.init("more than \(bytes) bytes of modules")
        }
    }
}
