import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import MuEvalWire
import SessionModel
import WireProtocol
import XCTest

/// Think-aloud media as the console plays it: the stream in byte ranges, the replay's audio with the playhead. The
/// helpers are the suite's (MediaCaptureTests.swift).
extension MediaCaptureTests {
    /// The console serves a stream as one file in byte ranges (what <audio> asks for), its transcript with it.
    func testConsoleServesTheStreamInRanges() async throws {
        let daemon = try await daemonWithoutTranscription()
        defer { daemon.cleanUp() }
        let session = try await start(daemon)
        let device = try await connect(daemon)
        let audio = TestAudio(seconds: 3)
        for chunk in audio.chunks(stream: "voice-1", start: 1_700_000_000, chunkSeconds: 0.5, firstSeq: 1) {
            try await device.send(WireEncoder.media(chunk))
        }
        try await device.waitForAck(6)
        await device.close()
        try await stop(daemon, session)
        let file = try SessionFile(path: session.path, synchronous: .full, indexed: true)
        try file.writeTranscript(device: "phone-1", stream: "voice-1", segments: [
            TranscriptSegment(device: "phone-1", stream: "voice-1", start: 1_700_000_001, end: 1_700_000_002,
                              text: "<b>where is</b> it", exclamation: "where is"),
        ])
        try file.finish(buildingIndexes: false)

        let link = try await daemon.consoleLink()
        let console = ConsoleClient(link: link.url)
        _ = try await console.login(link.url)
        let overview = try await console.request("GET", "/api/sessions/\(session.id)/media")
        XCTAssertEqual(overview.status, 200, overview.text)
        let json = try XCTUnwrap(overview.json() as? [String: Any])
        let streams = try XCTUnwrap(json["streams"] as? [[String: Any]])
        let url = try XCTUnwrap(streams.first?["url"] as? String)
        XCTAssertEqual(url, "/api/sessions/\(session.id)/media/phone-1/voice-1")
        XCTAssertEqual((json["transcript"] as? [[String: Any]])?.first?["text"] as? String, "<b>where is</b> it")
        // The sessions page's search: what testers said, across sessions.
        let search = try await console.request("GET", "/api/search?q=WHERE%20is")
        XCTAssertEqual(search.status, 200, search.text)
        let quotes = try XCTUnwrap((search.json() as? [String: Any])?["quotes"] as? [[String: Any]])
        XCTAssertEqual(quotes.count, 1, search.text)
        XCTAssertEqual(quotes.first?["session"] as? Int, Int(session.id))
        XCTAssertEqual((quotes.first?["segment"] as? [String: Any])?["start"] as? Double, 1_700_000_001)
        let none = try await console.request("GET", "/api/search?q=publish")
        XCTAssertEqual(((try none.json() as? [String: Any])?["quotes"] as? [Any])?.count, 0, none.text)
        let empty = try await console.request("GET", "/api/search?q=")
        XCTAssertEqual(empty.status, 400, empty.text)

        let expected = audio.file
        // Across the first chunk's end (44 + 16,000 bytes): the bytes of the exported file.
        let range = try await console.request("GET", url, headers: ["Range": "bytes=15990-16100"])
        XCTAssertEqual(range.status, 206)
        XCTAssertEqual(range.header("Content-Range"), "bytes 15990-16100/\(expected.count)")
        XCTAssertEqual(Array(range.body), Array(expected[15990...16100]))
        let tail = try await console.request("GET", url, headers: ["Range": "bytes=-100"])
        XCTAssertEqual(Array(tail.body), Array(expected.suffix(100)))
        let whole = try await console.request("GET", url)
        XCTAssertEqual(whole.status, 200)
        XCTAssertEqual(whole.header("Accept-Ranges"), "bytes")
        XCTAssertEqual(Array(whole.body), expected, "the header's sizes set, the chunks in order")
        let beyond = try await console.request("GET", url, headers: ["Range": "bytes=\(expected.count)-"])
        XCTAssertEqual(beyond.status, 416)
        XCTAssertEqual(beyond.header("Content-Range"), "bytes */\(expected.count)")
        let missing = try await console.request("GET", "/api/sessions/\(session.id)/media/phone-1/nothing")
        XCTAssertEqual(missing.status, 404)
    }

    /// In Chromium, the replay's <audio> follows the playhead, and the caption shows what was said.
    func testReplayAudioFollowsThePlayheadInTheBrowser() async throws {
        if let missing = try BrowserRequirement.missing() { throw XCTSkip(missing) }
        let daemon = try await daemonWithoutTranscription()
        defer { daemon.cleanUp() }
        let session = try await start(daemon)
        let device = try await connect(daemon)
        // The recording starts 1 s before the first event: media time = playhead + 1.
        let t0 = 1_700_000_000.0
        for chunk in TestAudio(seconds: 12).chunks(stream: "voice-1", start: t0 - 1, chunkSeconds: 1, firstSeq: 100) {
            try await device.send(WireEncoder.media(chunk))
        }
        for seq in Int64(1)...8 { try await device.send(event(seq: seq, at: t0 + Double(seq))) }
        try await device.waitForAck(111)
        await device.close()
        try await stop(daemon, session)
        let file = try SessionFile(path: session.path, synchronous: .full, indexed: true)
        try file.writeTranscript(device: "phone-1", stream: "voice-1", segments: [
            TranscriptSegment(device: "phone-1", stream: "voice-1", start: t0 + 4, end: t0 + 6, text: "where is the <i>menu</i>",
                              exclamation: "where is"),
        ])
        try file.finish(buildingIndexes: false)

        let link = try await daemon.consoleLink()
        let script = try runProcess(BrowserRequirement.python, [
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Browser/replay_audio_browser.py").path,
        ], environment: ["CONSOLE_LOGIN_URL": link.url, "SESSION_ID": String(session.id), "CAPTION_T": "4.5",
                         // The replay's 0 is the first event (t0 + 1): 4.5 s is device time t0 + 5.5, 6.5 s into the audio.
                         "MEDIA_T": "6.5",
                         "CAPTION_TEXT": "where is the <i>menu</i>"], timeout: 180)
        print(script.stdout)
        XCTAssertEqual(script.status, 0, script.stdout + script.stderr)
    }
}
