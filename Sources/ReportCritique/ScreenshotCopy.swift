internal import Foundation
internal import JournalStorage

/// Copies a report's screenshots into its `shots/` on a thread of its own while the page is written: creating a
/// thousand files is mostly waiting on the file system (`strace -c -w` of ReportBenchmark: 1,048 `openat`, 0.35 s
/// of a report's 0.6 s), which the page need not wait for. The session and study reports both copy through it;
/// each session file is opened once, by a reader of its own (the page's readers stay the page's).
final class ScreenshotCopy: @unchecked Sendable {
    struct Shot: Sendable {
        var sessionFile: String
        /// How the error names the session when its file lacks the image.
        var sessionName: String
        var sha256: String
    }

    /// The page's reference to the image `sha256`, relative to index.html.
    static func file(_ sha256: String) -> String { "shots/\(sha256).png" }

    private let done = DispatchSemaphore(value: 0)
    // Written by the thread before it signals `done`, read after `finish` waited for it.
    private var failure: (any Error)?

    /// Starts copying `shots` into `directory` (the report's shots/), each distinct image once.
    init(_ shots: [Shot], into directory: String) {
        Thread { [self] in
            defer { done.signal() }
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

    /// Waits for the copy; its error, if it failed. Called once, also when the page failed (the caller may remove
    /// the directory next).
    func finish() throws {
        done.wait()
        if let failure { throw failure }
    }

    /// Runs `page` while the copy runs, and waits for both: the page's error first, else the copy's.
    func alongside<T>(_ page: () throws -> T) throws -> T {
        let result = Result(catching: page)
        let copied = Result(catching: finish)
        let value = try result.get()
        try copied.get()
        return value
    }
}
