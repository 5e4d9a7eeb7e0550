// The wire decoder's fuzz target (docs/FUZZING.md, target `wire`). Built by Fuzz/build.sh, never by SwiftPM:
// this directory is outside Sources/.
//
// Each input is one connection's byte stream. It is decoded twice: appended all at once, and appended one byte
// at a time (the most fragmented a TCP stream can be). Besides crashes, leaks and hangs, the fuzzer stops on
// a broken invariant:
//   - the same stream split differently must yield the same messages (the decoder is incremental: framing may
//     not depend on where TCP cut the stream);
//   - while decoding, the decoder may hold no more than the message limit plus the last append;
//   - after a fatal error nothing more is decoded.
// Small limits put the "message too large" and "nesting too deep" paths within reach of short inputs.

internal import MuEvalWire
internal import WireProtocol

private let limits = WireLimits(maxMessageBytes: 2048, maxDepth: 6)

enum WireFuzz {
    static func run(_ bytes: [UInt8]) {
        let whole = decode(bytes, piece: max(bytes.count, 1))
        let bytewise = decode(bytes, piece: 1)
        guard messages(whole) == messages(bytewise) else {
            fatalError("splitting the stream changed the messages:\n whole: \(messages(whole))\n bytewise: \(messages(bytewise))")
        }
    }
}

/// Decodes `bytes` appended `piece` bytes at a time, draining after each append, then finishes the stream.
private func decode(_ bytes: [UInt8], piece: Int) -> [Result<WireMessage, WireError>] {
    var decoder = WireDecoder(limits: limits)
    var results: [Result<WireMessage, WireError>] = []
    var start = 0
    while start < bytes.count {
        let end = min(start + piece, bytes.count)
        decoder.append(bytes[start..<end])
        while let result = decoder.next() {
            if case .failure(let error) = result, error.isFatal {
                results.append(result)
                decoder.append(bytes[end...])
                precondition(decoder.next() == nil, "the decoder went on after a fatal error")
                return results
            }
            results.append(result)
        }
        // Held back: at most one incomplete message (within the limit, else it is being dropped) and the piece
        // just appended; compaction may keep up to its threshold of consumed bytes as well.
        precondition(decoder.bufferedByteCount <= limits.maxMessageBytes + (64 << 10) + piece,
                     "the decoder holds \(decoder.bufferedByteCount) bytes")
        start = end
    }
    if let error = decoder.finish() { results.append(.failure(error)) }
    return results
}

/// The decoded messages, errors left out: error wording may depend on what had arrived when they were reported.
private func messages(_ results: [Result<WireMessage, WireError>]) -> [WireMessage] {
    results.compactMap { try? $0.get() }
}
