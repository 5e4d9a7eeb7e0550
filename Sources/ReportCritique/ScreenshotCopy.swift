internal import Foundation
internal import SessionAnalysis

/// Copies a report's screenshots into its `shots/` on a thread of its own while the page is written: creating a
/// thousand files is mostly waiting on the file system (`strace -c -w` of ReportBenchmark: 1,048 `openat`, 0.35 s
/// of a report's 0.6 s), which the page need not wait for. Reads through a journal of its own: the writer's is
/// the page's.
final class ScreenshotCopy: @unchecked Sendable {
    struct Shot: Sendable {
        var sessionFile: String
        var sessionName: String
        var sha256: String
    }

    private let done = DispatchSemaphore(value: 0)
    // Written by the thread before it signals `done`, read after `finish` waited for it.
    private var failure: (any Error)?

    /// Starts copying `shots` (each a distinct image) into `directory`.
    init(_ shots: [Shot], into directory: String) {
        Thread { [self] in
            defer { done.signal() }
            do {
                var journals: [String: SessionJournal] = [:]
                for shot in shots {
                    let journal = try journals[shot.sessionFile] ?? SessionJournal(path: shot.sessionFile)
                    journals[shot.sessionFile] = journal
                    guard let bytes = try journal.blob(sha256: shot.sha256) else {
                        throw ReportError.missingScreenshot(sha256: shot.sha256, session: shot.sessionName)
                    }
                    try ReportDirectory.writeFile(directory + "/\(shot.sha256).png", bytes)
                }
            } catch {
                failure = error
            }
        }.start()
    }

    /// Waits for the copy; its error, if it failed. Called once, also when the page failed (the caller may remove
    /// the directory next).
    func finish() throws {
        done.wait()
        if let failure { throw failure }
    }
}
