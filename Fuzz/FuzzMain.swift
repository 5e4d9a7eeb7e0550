// libFuzzer's entry points for every fuzz target (docs/FUZZING.md). `MUEVAL_FUZZ_TARGET` names the target
// (Fuzz/run.sh sets it); `MUEVAL_FUZZ_SEED=SESSION.sqlite` instead prints a seed made from a session file.

internal import Foundation

nonisolated(unsafe) private var target = FuzzTarget.wire
/// `MUEVAL_FUZZ_VERBOSE=1` prints each run's error: to see that inputs get past the harness's setup.
nonisolated(unsafe) private var verbose = false

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>) -> CInt {
    let environment = ProcessInfo.processInfo.environment
    if let session = environment["MUEVAL_FUZZ_SEED"] {
        do {
            FileHandle.standardOutput.write(Data(try FuzzSession.seed(from: session)))
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("no seed from \(session): \(error)\n".utf8))
            exit(1)
        }
    }
    let name = environment["MUEVAL_FUZZ_TARGET"] ?? "wire"
    guard let chosen = FuzzTarget(rawValue: name) else {
        FileHandle.standardError.write(Data("MUEVAL_FUZZ_TARGET=\(name) is no target; there are \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))\n".utf8))
        exit(2)
    }
    target = chosen
    verbose = environment["MUEVAL_FUZZ_VERBOSE"] != nil
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    do {
        try target.run(Array(UnsafeRawBufferPointer(start: data, count: size)))
    } catch {
        // A refusal with an error is a good answer to bad input.
        if verbose { FileHandle.standardError.write(Data("\(target): \(error)\n".utf8)) }
    }
    return 0
}
