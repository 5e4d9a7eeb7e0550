internal import ChildScripts
internal import DescriptorIO
internal import Foundation
internal import Synchronization
internal import WireProtocol

/// The scan's process (`ChildScript.faceScan`): `python3 -I` in `/` with a minimal environment, under `memoryMiB` of
/// address space and `cpuSeconds` of CPU, in its own process group, which is killed whole after `timeout`.
extension FaceScanner {
    /// The largest output read from the script.
    static let maxOutputBytes = 16 << 20
    /// Everything the script's process gets of an environment: no variable of muevald's (its device token, its
    /// database URL) or of the lab member running `muevalctl report`. One malloc arena a thread at most keeps the
    /// address space OpenCV's threads reserve well inside `memoryMiB` on a machine with many cores.
    static let environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "MALLOC_ARENA_MAX": "2"]

    /// Scans the video file (H.264 in MP4, fragmented or not, as phones send it).
    public func scan(video: String) -> Outcome {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            return .unavailable("no face scan: \(python) is missing (apt install python3-opencv opencv-data)")
        }
        guard samplesPerSecond.isFinite, samplesPerSecond > 0, timeout.isFinite, timeout > 0, maxSamples > 0, maxFrameWidth > 0,
              maxFrameHeight > 0, memoryMiB > 0, cpuSeconds > 0 else {
            return .failed("the face scan's limits must be positive")
        }
        // The frames go over a socket (sends that never raise SIGPIPE), ours close-on-exec so that the script sees its end.
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            return .failed("the face scan cannot start: no socket pair (\(String(cString: strerror(errno))))")
        }
        let frames = pair[0]
        defer { close(frames) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ChildScript.faceScan.limitedCommand(
            name: "face-scan", python: python, options: ["-I"], memoryMiB: memoryMiB, cpuSeconds: cpuSeconds,
            arguments: [cascades, emotionModel, String(maxSamples), String(memoryMiB)])
        process.environment = Self.environment
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle(fileDescriptor: pair[1], closeOnDealloc: false)
        // Never a signal once it exited: its process group's number may be another's by then.
        let exited = Arc(Mutex(false))
        process.terminationHandler = { _ in exited.value.withLock { $0 = true } }
        do {
            try process.run()
        } catch {
            close(pair[1])
            return .failed("the face scan cannot start: \(error)")
        }
        close(pair[1])
        // Foundation makes the child a process group's leader: the kill reaches what it started.
        let group = -process.processIdentifier
        let stop = { @Sendable in exited.value.withLock { if !$0 { kill(group, SIGKILL) } } }
        let killer = DispatchWorkItem(block: stop)
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
        let decodingError = feed(video: video, to: Descriptor(frames))
        // End of input: the script answers once it has read every frame (or at once when it cannot scan).
        shutdown(frames, Int32(SHUT_WR))
        let data = (try? output.fileHandleForReading.read(upToCount: Self.maxOutputBytes)) ?? Data()
        if data.count >= Self.maxOutputBytes { stop() }
        process.waitUntilExit()
        killer.cancel()
        if process.terminationReason == .uncaughtSignal {
            return .failed("the face scan was stopped after \(Int(saturating: timeout)) s, \(cpuSeconds) CPU seconds or \(memoryMiB) MiB"
                + " (or its output exceeded \(Self.maxOutputBytes >> 20) MiB)")
        }
        let outcome: Outcome
        do {
            outcome = try FaceScan.parse(data, limits: self)
        } catch {
            // Python's own end (a MemoryError's traceback went to /dev/null): what the scan was allowed says the likely cause.
            guard process.terminationStatus == 0 else {
                return .failed("the face scan exited with status \(process.terminationStatus) (allowed \(memoryMiB) MiB, \(cpuSeconds) CPU seconds)")
            }
            return .failed("\(error)")
        }
        // The script's word that it cannot scan at all wins over what the video is; else the video's error is the answer.
        if let decodingError, case .scanned = outcome { return .failed(decodingError) }
        return outcome
    }
}

/// Shares a non-copyable value (a `Mutex`) between the scan and Foundation's termination handler.
private final class Arc<Value: ~Copyable>: Sendable where Value: Sendable {
    let value: Value
    init(_ value: consuming Value) { self.value = value }
}
