internal import HTTPTypes
internal import Hummingbird
internal import NIOCore

// Apart from ByteRangeRequest.swift, which the fuzzer compiles on its own (Fuzz/build.sh): this needs NIO's modules.
extension ByteRangeRequest {
    /// The answer to a GET of a file of `total` bytes with `header` as its `Range`: 206 with the range
    /// (at most `limit` bytes), 416, or 200 with the whole file read and written `limit` bytes at a time
    /// (memory holds one piece, whatever the length). `headers` go with each; `read` gives a range's bytes.
    static func response(_ header: String?, total: Int64, limit: Int64, headers: HTTPFields,
                         read: @escaping @Sendable (Range<Int64>) async throws -> [UInt8]) async throws -> Response {
        var headers = headers
        headers[.acceptRanges] = "bytes"
        switch answer(header, total: total, limit: limit) {
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(total)"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        case .partial(let range):
            let bytes = try await read(range)
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(total)"
            return Response(status: .partialContent, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        case .whole:
            return Response(status: .ok, headers: headers, body: ResponseBody(contentLength: Int(total)) { writer in
                var offset: Int64 = 0
                while offset < total {
                    let range = offset..<min(total, offset.checkedAdding(limit) ?? total)
                    try await writer.write(ByteBuffer(bytes: try await read(range)))
                    offset = range.upperBound
                }
                try await writer.finish(nil)
            })
        }
    }
}
