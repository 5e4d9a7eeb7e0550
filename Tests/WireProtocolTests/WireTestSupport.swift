import MuEvalWire
import OrderedCollections
import WireProtocol
import XCTest

/// Decodes `bytes` appended in pieces of `chunkSize` (everything at once when nil), draining after each append,
/// then finishing the stream.
func decodeAll(_ bytes: [UInt8], chunkSize: Int? = nil, limits: WireLimits = .init()) -> [Result<WireMessage, WireError>] {
    var decoder = WireDecoder(limits: limits)
    var results: [Result<WireMessage, WireError>] = []
    var start = 0
    repeat {
        let end = min(start + (chunkSize ?? bytes.count), bytes.count)
        decoder.append(bytes[start..<end])
        while let result = decoder.next() { results.append(result) }
        start = end
    } while start < bytes.count
    if let error = decoder.finish() { results.append(.failure(error)) }
    return results
}

func decodeAll(_ text: String, chunkSize: Int? = nil, limits: WireLimits = .init()) -> [Result<WireMessage, WireError>] {
    decodeAll(Array(text.utf8), chunkSize: chunkSize, limits: limits)
}

/// Decodes `stream` appended in two parts, split at `offset`, as a socket may deliver it.
func decodeSplit(_ stream: [UInt8], at offset: Int) -> [Result<WireMessage, WireError>] {
    var decoder = WireDecoder()
    var results: [Result<WireMessage, WireError>] = []
    decoder.append(stream[..<offset])
    while let result = decoder.next() { results.append(result) }
    decoder.append(stream[offset...])
    while let result = decoder.next() { results.append(result) }
    if let error = decoder.finish() { results.append(.failure(error)) }
    return results
}

/// One line per result, for compact assertions: `event <class>`, `hello <id>`, or the error kind.
func summary(_ results: [Result<WireMessage, WireError>]) -> [String] {
    results.map { result in
        switch result {
        case .success(.event(let event)): "event \(event.eventClass)"
        case .success(.hello(let hello)): "hello \(hello.deviceId)"
        case .success(.media(let media)): "media \(media.stream) \(media.part)"
        case .success(.goodbye): "goodbye"
        case .success(.welcome(let welcome)): "welcome \(welcome.sessionId)"
        case .success(.ack(let seq)): "ack \(seq)"
        case .success(.error(let error)): "error \(error.reason)"
        case .failure(let error): "\(error.kind)"
        }
    }
}

/// The single event `xml` decodes to.
func decodeEvent(_ xml: String, file: StaticString = #filePath, line: UInt = #line) throws -> WireEvent {
    let results = decodeAll(xml)
    guard results.count == 1, case .success(.event(let event)) = results[0] else {
        throw TestFailure("expected one event, got \(results)")
    }
    return event
}

/// Ends a test as failed with `description` (a skip would hide it).
struct TestFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// The typed JSON payload of an event whose other keys are `body`.
func payload(_ body: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
    let event = try decodeEvent("<event><key>class</key><string>T</string>\(body)</event>", file: file, line: line)
    return String(decoding: event.payload, as: UTF8.self)
}

/// The JSON for `payload(body)` when body holds the single key `v`.
func json(_ value: String) -> String { #"{"class":"T","v":"# + value + "}" }

/// The one error a message decodes to.
func decodeError(_ xml: String, file: StaticString = #filePath, line: UInt = #line) -> WireError? {
    let results = decodeAll(xml)
    guard results.count == 1, case .failure(let error) = results[0] else {
        XCTFail("expected one error, got \(results)", file: file, line: line)
        return nil
    }
    return error
}

let goodEvent = "<event><key>class</key><string>Good</string></event>\n"

/// Decodes `bad` followed by a valid event, whole and one byte at a time: `expected` errors, then the event.
func assertResyncs(_ bad: [UInt8], _ expected: [WireErrorKind], limits: WireLimits = .init(),
                   file: StaticString = #filePath, line: UInt = #line) {
    let stream = bad + Array(goodEvent.utf8)
    let want = expected.map { "\($0)" } + ["event Good"]
    XCTAssertEqual(summary(decodeAll(stream, limits: limits)), want, "whole", file: file, line: line)
    XCTAssertEqual(summary(decodeAll(stream, chunkSize: 1, limits: limits)), want, "byte by byte", file: file, line: line)
    for result in decodeAll(stream, limits: limits) {
        if case .failure(let error) = result {
            XCTAssertFalse(error.isFatal, file: file, line: line)
            XCTAssertFalse(error.message.isEmpty, file: file, line: line)
        }
    }
}

func assertResyncs(_ bad: String, _ expected: [WireErrorKind], limits: WireLimits = .init(),
                   file: StaticString = #filePath, line: UInt = #line) {
    assertResyncs(Array(bad.utf8), expected, limits: limits, file: file, line: line)
}

/// Blobs by SHA-256, for `TypedJSON.decode`.
func blobLookup(_ blobs: [Blob]) -> (String) throws -> [UInt8] {
    { sha in
        guard let blob = blobs.first(where: { $0.sha256 == sha }) else { throw MissingBlob(sha256: sha) }
        return blob.bytes
    }
}

struct MissingBlob: Error { var sha256: String }
