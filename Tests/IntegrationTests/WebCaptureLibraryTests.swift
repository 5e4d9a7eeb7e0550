import DaemonTestSupport
import Foundation
import NIOCore
import NIOPosix
import XCTest

/// muEval for the web as ES modules: `capture.js` and the modules it imports under `/capture/`, served by both of
/// muevald's listeners (the console and `capture.web_listen`) from the files read at start, and nothing else under
/// `/capture/` (docs/PROTOCOL.md, "WebSocket"). Requests are written byte for byte: URLSession's curl would remove
/// `/../` before sending it.
final class WebCaptureLibraryTests: XCTestCase {
    private static let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../CaptureLibrary/Web").standardizedFileURL

    func testBothListenersServeTheModulesAndNothingElseUnderCapture() async throws {
        let daemon = try await TestDaemon.start(arguments: ["--web-listen", "127.0.0.1:0"])
        defer { daemon.cleanUp() }
        let link = try await daemon.consoleLink().url
        let console = try XCTUnwrap(URLComponents(string: link)?.port)
        let own = try await eventually(timeout: 20, "the web listener (log: \(daemon.log))") { () -> Int? in
            guard let range = daemon.log.range(of: #"web capture listening on ws://127\.0\.0\.1:[0-9]+/capture"#, options: .regularExpression) else { return nil }
            return Int(daemon.log[range].split(separator: ":").last?.split(separator: "/").first ?? "")
        }

        for (listener, port) in [("the console", console), ("capture.web_listen", own)] {
            for file in ["capture.js", "capture/plist.js", "capture/constants.js"] {
                let answer = try await Self.get("/" + file, port: port)
                XCTAssertEqual(answer.status, 200, "\(listener) /\(file): \(answer.text)")
                XCTAssertEqual(answer.headers["content-type"], "text/javascript; charset=utf-8", "\(listener) /\(file)")
                XCTAssertEqual(answer.headers["access-control-allow-origin"], "*", "\(listener) /\(file)")
                XCTAssertEqual(answer.headers["cache-control"], "no-cache", "\(listener) /\(file)")
                XCTAssertEqual(answer.body, try Data(contentsOf: Self.library.appendingPathComponent(file)), "\(listener) /\(file): the file on disk")
            }
            // Only the files read at start, by their exact path: no way up, encoded or not, and nothing but .js.
            for path in ["/capture/nope.js", "/capture/../Package.swift", "/capture/%2e%2e/x", "/capture/%2E%2E/Package.swift",
                         "/capture/..%2fPackage.swift", "/capture//etc/passwd", "/capture/sources"] {
                let answer = try await Self.get(path, port: port)
                XCTAssertEqual(answer.status, 404, "\(listener) \(path): \(answer.text)")
                XCTAssertEqual(answer.text.split(separator: "\n"), [Substring(answer.text.trimmingCharacters(in: .newlines))],
                               "\(listener) \(path): one line of why")
                XCTAssertTrue(answer.text.contains("\(path) is no module of muEval's web capture library"), "\(listener) \(path): \(answer.text)")
                XCTAssertNil(answer.headers["access-control-allow-origin"], "\(listener) \(path)")
            }
            // What a browser does not need is not served: the types and the npm manifest stay on the disk.
            for path in ["/capture.d.ts", "/package.json"] {
                let status = try await Self.get(path, port: port).status
                XCTAssertEqual(status, 404, "\(listener) \(path)")
            }
            // The WebSocket keeps exactly `/capture`, beside its namesake folder.
            let device = try await TestDevice.connectWebSocket(port: port, origin: nil)
            await device.close()
        }
    }

    /// One GET written as is, and its answer: read to its Content-Length (the console may keep the connection).
    private static func get(_ path: String, port: Int) async throws -> RawAnswer {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"))
            var received = Data()
            for try await chunk in inbound {
                received.append(contentsOf: chunk.readableBytesView)
                if let answer = RawAnswer(received), answer.body.count >= answer.length { return answer }
            }
            return try XCTUnwrap(RawAnswer(received), "no whole answer to GET \(path): \(String(decoding: received, as: UTF8.self))")
        }
    }
}

/// An HTTP/1.1 answer as bytes came: status, headers (names lowercased), body.
private struct RawAnswer {
    let status: Int
    let headers: [String: String]
    let body: Data
    let length: Int

    var text: String { String(decoding: body, as: UTF8.self) }

    init?(_ bytes: Data) {
        guard let end = bytes.range(of: Data("\r\n\r\n".utf8)) else { return nil }
        let lines = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        guard let status = lines.first?.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        self.status = status
        self.headers = headers
        body = Data(bytes[end.upperBound...])
        length = headers["content-length"].flatMap { Int($0) } ?? .max
    }
}
