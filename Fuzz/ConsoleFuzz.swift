// The console's request parsing (target `console`): the Range header of the media endpoint, the numbers of a
// query string, and the errors that name a bad JSON body's field. The console module needs Hummingbird, too
// heavy to build instrumented in CI's minutes, so Fuzz/build.sh compiles its pure files into this module:
// ByteRangeRequest.swift and ConsoleInput.swift, with `ConsoleError` below standing in for the console's.

internal import Foundation
internal import SessionModel
internal import WireProtocol

/// The console's error as ConsoleInput and the visitor quotas throw it (the real one also turns into an HTTP response).
enum ConsoleError: Error {
    case badRequest(String)
    case tooManyRequests(String)
}

enum ConsoleFuzz {
    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        switch input.below(3) {
        case 0: range(&input)
        case 1: query(&input)
        default: body(Array(bytes.dropFirst()))
        }
    }

    /// Any header against any size: `.partial` only within the file, non-empty, at most `limit` bytes.
    static func range(_ input: inout FuzzInput) {
        let total = input.integer(), limit = input.integer()
        let header = String(decoding: input.bytes(256), as: UTF8.self)
        switch ByteRangeRequest.answer(header, total: total, limit: limit) {
        case .partial(let range):
            precondition(range.lowerBound >= 0 && range.upperBound <= total && !range.isEmpty && range.count <= limit,
                         "\(header) of \(total) bytes (limit \(limit)) answered with \(range)")
        case .whole, .unsatisfiable:
            break
        }
    }

    /// A query parameter: a number in range, or a 400 that says so.
    static func query(_ input: inout FuzzInput) {
        let text = String(decoding: input.bytes(64), as: UTF8.self)
        if let value = try? ConsoleInput.integer(text, name: "after", in: 0...Int64.max) { precondition(value >= 0) }
        if let value = try? ConsoleInput.integer(text, name: "limit", in: 1...Int.max) { precondition(value >= 1) }
        _ = try? ConsoleInput.time(Double(text), field: "t")
    }

    /// A body that is not what the call takes: the error names the field, whatever was sent.
    static func body(_ bytes: [UInt8]) {
        let data = Data(bytes)
        for attempt in [{ _ = try JSONDecoder().decode(StudyResponses.self, from: data) },
                        { _ = try JSONDecoder().decode(StudyTask.self, from: data) },
                        { _ = try JSONDecoder().decode([String: [Int]].self, from: data) }] as [() throws -> Void] {
            do { try attempt() } catch { precondition(!ConsoleInput.describe(error, body: data).isEmpty) }
        }
    }
}
