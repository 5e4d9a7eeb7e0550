internal import Foundation
internal import JournalStorage
internal import WireProtocol

/// Copies a report's screenshots into its `shots/` on a thread of its own while the page is written: creating a
/// thousand files is mostly waiting on the file system (`strace -c -w` of ReportBenchmark: 1,048 `openat`, 0.35 s
/// of a report's 0.6 s; in muevald right after a stop, 0.06–0.85 s for the hour's thousand), which the page need not
/// wait for, nor, in the console, its reader (`ReportWriter.writePage`). The session and study reports both copy
/// through it; each session file is opened once, by a reader of its own (the page's readers stay the page's).
public final class ScreenshotCopy: @unchecked Sendable {
    struct Shot: Sendable {
        var sessionFile: String
        /// How the error names the session when its file lacks the image.
        var sessionName: String
        var sha256: String
    }

    /// The page's reference to the image `sha256`, relative to index.html.
    static func file(_ sha256: String) -> String { "shots/\(sha256).png" }

    /// The image a report's `parts` (its path below the folder) name, when they are a screenshot of `shots/`.
    public static func sha256(of parts: [Substring]) -> String? {
        guard parts.count == 2, parts[0] == "shots", parts[1].hasSuffix(".png") else { return nil }
        return BlobName(parts[1].dropLast(4))?.hex
    }

    private let done = DispatchSemaphore(value: 0)
    // Written by the thread before it signals `done`, read after `finish` waited for it.
    private var failure: (any Error)?
    /// Who `whenDone` asked to hear of the end while the copy ran; nil once it ended.
    private var listeners: [@Sendable ((any Error)?) -> Void]? = []
    private let lock = NSLock()

    /// Starts copying `shots` into `directory` (the report's shots/), each distinct image once.
    init(_ shots: [Shot], into directory: String) {
        Thread { [self] in
            defer {
                let waiting = lock.withLock {
                    defer { listeners = nil }
                    return listeners ?? []
                }
                waiting.forEach { $0(failure) }
                // After the listeners: whoever waited in `finish` finds them told.
                done.signal()
            }
            do {
                var readers: [String: SessionReader] = [:]
                var copied: Set<String> = []
                for shot in shots where copied.insert(shot.sha256).inserted {
                    let reader = try readers[shot.sessionFile] ?? Self.open(shot.sessionFile)
                    readers[shot.sessionFile] = reader
                    guard let bytes = try reader.blob(sha256: shot.sha256) else {
                        throw ReportError.missingScreenshot(sha256: shot.sha256, session: shot.sessionName)
                    }
                    try ReportDirectory.writeFile(directory + "/\(shot.sha256).png", bytes)
                }
            } catch {
                failure = error
            }
        }.start()
    }

    private static func open(_ path: String) throws -> SessionReader {
        do {
            return try SessionReader(path: path)
        } catch {
            throw ReportError.cannotRead(path: path, reason: "\(error)")
        }
    }

    /// Waits for the copy; its error, if it failed. Also when the page failed (the caller may remove the directory
    /// next). Any number of times.
    public func finish() throws {
        done.wait()
        done.signal()
        if let failure { throw failure }
    }

    /// Calls `body` with the copy's error (nil: every screenshot is in `shots/`) once it ended: on the copying
    /// thread, or on the caller's at once when it has ended already. Does not wait.
    public func whenDone(_ body: @escaping @Sendable ((any Error)?) -> Void) {
        let running = lock.withLock {
            listeners?.append(body)
            return listeners != nil
        }
        if !running { body(failure) }
    }

    /// Runs `page` while the copy runs, and waits for the copy only when the page failed (then throws the page's error).
    func ahead<T>(_ page: () throws -> T) throws -> T {
        do {
            return try page()
        } catch {
            try? finish()
            throw error
        }
    }

    /// Runs `page` while the copy runs, and waits for both: the page's error first, else the copy's.
    func alongside<T>(_ page: () throws -> T) throws -> T {
        let value = try ahead(page)
        try finish()
        return value
    }
}
