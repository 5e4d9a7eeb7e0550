import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import MuEvalWire
import SessionModel
import WireProtocol
import XCTest

/// Think-aloud media through the real chain: device → muevald → session file → `muevalctl media`.
final class MediaCaptureTests: XCTestCase {
    func start(_ daemon: TestDaemon, sensors: [String] = []) async throws -> SessionRecord {
        try await daemon.ctl.call(ControlRequest.StartSession(name: "think-aloud", device: "phone-1", sensors: sensors))
    }

    /// A daemon that leaves transcripts to the test: its own transcription of the test's tone would
    /// replace the segments the test writes into the file.
    func daemonWithoutTranscription() async throws -> TestDaemon {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("media-\(UUID().uuidString.prefix(8)).toml").path
        try "[transcription]\nenabled = false\n".write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        return try await TestDaemon.start(arguments: ["--config", config])
    }

    func connect(_ daemon: TestDaemon) async throws -> TestDevice {
        let device = try await daemon.connectDevice()
        try await device.hello(DeviceHello(deviceId: "phone-1"))
        _ = try await device.waitFor("welcome") { _ in device.welcome }
        return device
    }

    func stop(_ daemon: TestDaemon, _ session: SessionRecord) async throws {
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))
    }

    func event(seq: Int64, at time: Double) -> [UInt8] {
        WireEncoder.event(["class": .string("UserInputEvent"), "timestamp": .real(time), "seq": .integer(seq)])
    }

    /// Chunks and events share the device's seqs; after a reconnect the device resends what it is
    /// not sure of: every chunk is stored once, and the exported file is the recording, playable.
    func testStreamResentAfterReconnectIsStoredOnceAndExportsAsOnePlayableFile() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await start(daemon)
        let audio = TestAudio(seconds: 5)
        let start = 1_700_000_000.0
        // Media take the even seqs, events the odd ones between them.
        let chunks = audio.chunks(stream: "voice-1", start: start, chunkSeconds: 0.5, firstSeq: 2, seqStride: 2)
        XCTAssertEqual(chunks.count, 10)

        var device = try await connect(daemon)
        for chunk in chunks[..<7] {
            try await device.send(WireEncoder.media(chunk) + event(seq: chunk.seq! + 1, at: chunk.start))
        }
        try await device.waitForAck(chunks[6].seq! + 1)
        await device.close()

        // The device did not see the last acks: it resends from chunk 4 on, then the rest.
        device = try await connect(daemon)
        for chunk in chunks[4...] {
            try await device.send(WireEncoder.media(chunk) + event(seq: chunk.seq! + 1, at: chunk.start))
        }
        try await device.waitForAck(chunks[9].seq! + 1)
        XCTAssertEqual(device.errors, [])
        try await device.goodbye()
        await device.close()
        try await stop(daemon, session)

        let rows = try runProcess("/usr/bin/sqlite3", [session.path, "SELECT COUNT(*), COUNT(DISTINCT part), SUM(length(bytes)) FROM media"])
        XCTAssertEqual(rows.stdout, "10|10|\(audio.pcm.count + 44)\n", rows.stderr)
        let events = try runProcess("/usr/bin/sqlite3", [session.path, "SELECT COUNT(*) FROM events"])
        XCTAssertEqual(events.stdout, "10\n")
        let status = try await daemon.ctl.call(ControlRequest.Status())
        XCTAssertEqual(status.counters.mediaChunksStored, 10)

        let out = daemon.directory + "/media-out"
        let result = try daemon.muevalctl(["media", String(session.id), "--out", out, "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let summary = try JSONDecoder().decode(MediaSummary.self, from: Data(result.stdout.utf8))
        XCTAssertEqual(summary.files.map(\.file), ["voice-1.wav"])
        XCTAssertEqual(summary.files.first?.stream.start, start)
        XCTAssertEqual(summary.files.first?.stream.parts, 10)
        XCTAssertEqual(summary.files.first?.stream.missingParts, 0)
        let exported = try Data(contentsOf: URL(fileURLWithPath: out + "/voice-1.wav"))
        XCTAssertEqual(Array(exported), audio.file, "the export is the recording with its header's sizes set")
        let permissions = try FileManager.default.attributesOfItem(atPath: out + "/voice-1.wav")[.posixPermissions] as? Int
        XCTAssertEqual(permissions, 0o600, "a participant's voice is readable by its owner only")

        let ffprobe = "/usr/bin/ffprobe"
        guard FileManager.default.isExecutableFile(atPath: ffprobe) else {
            throw XCTSkip("CANNOT RUN HERE: ffprobe is missing (Debian package ffmpeg, installed by `make test-deps`)")
        }
        let probe = try runProcess(ffprobe, ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", out + "/voice-1.wav"])
        let duration = try XCTUnwrap(Double(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), probe.stderr)
        XCTAssertEqual(duration, 5, accuracy: 0.05, "ffprobe's duration within 1 % of what was sent")
    }

    /// A chunk muevald does not store gets an <error> naming its seq; the connection and its events go on.
    func testUnknownContentTypeIsRefusedAndEventsGoOn() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await start(daemon)
        let device = try await connect(daemon)
        try await device.send("""
            <media><key>stream</key><string>v</string><key>contentType</key><string>audio/ogg</string>\
            <key>part</key><integer>0</integer><key>start</key><real>1</real><key>seq</key><integer>1</integer>\
            <key>data</key><data>AAAA</data></media>
            """)
        try await device.send(event(seq: 2, at: 1_700_000_000))
        try await device.waitForAck(2)
        let error = try XCTUnwrap(device.errors.first)
        XCTAssertEqual(error.seq, 1)
        XCTAssertTrue(error.reason.contains("audio/ogg") && error.reason.contains("audio/wav"), error.reason)
        let events = try await daemon.ctl.events(ControlRequest.Events(session: String(session.id)))
        XCTAssertEqual(events.count, 1)
        await device.close()
    }

    /// A session that selects sensors without `microphone` does not keep audio, and says so in <welcome>.
    func testSessionWithoutMicrophoneKeepsNoAudio() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await start(daemon, sensors: ["UserInputEvent"])
        let device = try await connect(daemon)
        XCTAssertEqual(device.welcome?.sensors, ["UserInputEvent"])
        for chunk in TestAudio(seconds: 1).chunks(stream: "voice-1", start: 1_700_000_000, chunkSeconds: 0.5, firstSeq: 1) {
            try await device.send(WireEncoder.media(chunk))
        }
        try await device.send(event(seq: 3, at: 1_700_000_001))
        try await device.waitForAck(3)
        await device.close()
        try await stop(daemon, session)
        XCTAssertEqual(try SessionReader(path: session.path).mediaStreams(), [])
    }

    /// A large chunk still arriving on one connection holds back no other connection's events
    /// (the partial message waits in its own buffer; docs/PROTOCOL.md, "Media").
    func testEventsFlowWhileALargeChunkIsHalfSent() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await start(daemon)
        let slow = try await connect(daemon)
        var big = TestAudio(seconds: 30).chunks(stream: "voice-1", start: 1_700_000_000, chunkSeconds: 30, firstSeq: 1)[0]
        big.seq = 1
        let message = WireEncoder.media(big)
        XCTAssertGreaterThan(message.count, 1_000_000)
        try await slow.send(Array(message[..<(message.count / 2)]))

        let fast = try await connect(daemon)
        for seq in Int64(2)...101 { try await fast.send(event(seq: seq, at: 1_700_000_000 + Double(seq))) }
        try await fast.waitForAck(101)
        XCTAssertNil(slow.acknowledged, "the half-sent chunk is not stored yet")

        try await slow.send(Array(message[(message.count / 2)...]))
        try await slow.waitForAck(1)
        await slow.close()
        await fast.close()
        try await stop(daemon, session)
        XCTAssertEqual(try SessionReader(path: session.path).mediaStreams().first?.bytes, Int64(big.bytes.count))
    }

    /// `export` keeps media and transcript after the events: JSON lines with the bytes in base64.
    func testExportKeepsMedia() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await start(daemon)
        let device = try await connect(daemon)
        let chunks = TestAudio(seconds: 1).chunks(stream: "voice-1", start: 1_700_000_000, chunkSeconds: 0.5, firstSeq: 1)
        for chunk in chunks { try await device.send(WireEncoder.media(chunk)) }
        try await device.send(event(seq: 3, at: 1_700_000_000.5))
        try await device.waitForAck(3)
        await device.close()
        try await stop(daemon, session)

        let export = try daemon.muevalctl(["export", String(session.id), "--format", "jsonl"])
        XCTAssertEqual(export.status, 0, export.stderr)
        let lines = export.stdout.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        XCTAssertEqual(lines.count, 4, "the event, two chunks, the session's record")
        XCTAssertEqual(lines[0]?["class"] as? String, "UserInputEvent")
        XCTAssertNotNil(lines[3]?["session"])
        let media = lines[1...].compactMap { $0?["media"] as? [String: Any] }
        XCTAssertEqual(media.map { $0["part"] as? Int }, [0, 1])
        XCTAssertEqual(media.compactMap { ($0["data"] as? String).flatMap { Data(base64Encoded: $0) } }.map(Array.init),
                       chunks.map(\.bytes))

        let plist = try daemon.muevalctl(["export", String(session.id)])
        XCTAssertEqual(plist.status, 0, plist.stderr)
        let parsed = try PropertyListSerialization.propertyList(from: Data(plist.stdout.utf8), format: nil) as? [[String: Any]]
        XCTAssertEqual(parsed?.count, 4)
        XCTAssertEqual((parsed?[2]["media"] as? [String: Any])?["data"] as? Data, Data(chunks[1].bytes))
    }

    /// `events --grep` finds what the tester said, in time order with the events that match.
    func testEventsGrepFindsSpeechInTimeOrder() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await start(daemon)
        let device = try await connect(daemon)
        let t0 = 1_700_000_000.0
        try await device.send(WireEncoder.event(["class": .string("UserInterfaceEvent"), "timestamp": .real(t0 + 1),
                                                 "seq": .integer(1), "view": .string("PublishViewController")]))
        try await device.send(WireEncoder.event(["class": .string("UserInputEvent"), "timestamp": .real(t0 + 5),
                                                 "seq": .integer(2), "view": .string("PublishViewController")]))
        try await device.waitForAck(2)
        await device.close()
        try await stop(daemon, session)
        let file = try SessionFile(path: session.path, synchronous: .full, indexed: true)
        try file.writeTranscript(device: "phone-1", stream: "voice-1", segments: [
            TranscriptSegment(device: "phone-1", stream: "voice-1", start: t0 + 3, end: t0 + 4, text: "where is the publish button",
                              confidence: 0.8, exclamation: "where is"),
            TranscriptSegment(device: "phone-1", stream: "voice-1", start: t0 + 6, end: t0 + 7, text: "okay that works"),
        ])
        try file.finish(buildingIndexes: false)

        let found = try daemon.muevalctl(["events", String(session.id), "--grep", "Where Is"])
        XCTAssertEqual(found.status, 0, found.stderr)
        XCTAssertTrue(found.stdout.contains("speech  \"where is the publish button\" (exclamation: where is)"), found.stdout)
        XCTAssertFalse(found.stdout.contains("okay that works"), found.stdout)

        let mixed = try daemon.muevalctl(["events", String(session.id), "--grep", "ublish", "--json"])
        XCTAssertEqual(mixed.status, 0, mixed.stderr)
        let lines = mixed.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        XCTAssertEqual(lines.map { $0["speech"] != nil ? "speech" : ($0["class"] as? String ?? "?") },
                       ["UserInterfaceEvent", "speech", "UserInputEvent"], "in time order")

        let none = try daemon.muevalctl(["events", String(session.id), "--grep", "no such words"])
        XCTAssertEqual(none.stdout, "nothing matches\n")
    }

    /// Media beyond the session's limit are refused chunk by chunk, naming the setting; events go on.
    func testMediaBeyondTheSessionLimitAreRefusedAndEventsGoOn() async throws {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("media-\(UUID().uuidString.prefix(8)).toml").path
        try "[limits]\nmax_media_bytes_per_session = 40000\n".write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let daemon = try await TestDaemon.start(arguments: ["--config", config])
        defer { daemon.cleanUp() }
        let session = try await start(daemon)
        let device = try await connect(daemon)
        // 16,044 + 16,000 bytes fit in 40,000; the third chunk does not.
        let chunks = TestAudio(seconds: 2).chunks(stream: "voice-1", start: 1_700_000_000, chunkSeconds: 0.5, firstSeq: 1)
        for chunk in chunks { try await device.send(WireEncoder.media(chunk)) }
        try await device.send(event(seq: 5, at: 1_700_000_002))
        try await device.waitForAck(5)
        XCTAssertEqual(device.errors.map(\.seq), [3, 4])
        XCTAssertTrue(device.errors.first?.reason.contains("limits.max_media_bytes_per_session") == true, "\(device.errors)")
        let status = try await daemon.ctl.call(ControlRequest.Status())
        XCTAssertEqual(status.counters.mediaRefused, 2)
        await device.close()
        try await stop(daemon, session)
        XCTAssertEqual(try SessionReader(path: session.path).mediaStreams().first?.parts, 2)
        XCTAssertEqual(try SessionReader(path: session.path).eventCount(), 1)
    }
}
