import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import MuEvalWire
import OrderedCollections
import SessionModel
import WireProtocol
import XCTest

/// A device session full of absurd numbers, through the real muevald and every stage after the parser:
/// NaN, ±inf, 1e300, times 10¹⁸ s away, touches at no place, `uiState` frames of infinite size, a NaN
/// screen, voice chunks years apart. What the wire refuses it refuses with an `<error>`; the same values
/// written straight into the session file (as a file recorded before the edge checked them holds them)
/// reach the automatic report, `muevalctl report`, the replay index, export, media and transcription.
/// muevald stays up, every command has a clear result, and its memory stays bounded (docs/REPORTS.md,
/// "Absurd numbers"). Before, the automatic report trapped in `Format.clock` and the transcription
/// allocated the 3×10⁸ s of silence between two chunks in one array.
final class AbsurdValuesTests: XCTestCase {
    /// muevald's peak resident memory after all of it (VmHWM); the recogniser's model is most of it.
    private let peakMemoryBound = 512 << 20

    func testAbsurdSessionLeavesMuevaldUpWithAClearResultForEveryCommand() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "absurd", device: "phone-1"))
        let device = try await daemon.connectDevice()
        try await device.hello(DeviceHello(deviceId: "phone-1", device: DeviceDescription(screenWidth: 320, screenHeight: 480)))
        _ = try await device.waitFor("welcome") { _ in device.welcome }

        let start = 1_700_000_000.0
        var sent: [Int64] = []
        func send(_ eventClass: String, at time: Double, _ fields: OrderedDictionary<String, PlistValue>) async throws {
            let seq = Int64(sent.count + 1)
            sent.append(seq)
            var event: OrderedDictionary<String, PlistValue> = ["class": .string(eventClass), "timestamp": .real(time), "seq": .integer(seq)]
            event.merge(fields) { current, _ in current }
            try await device.event(event)
        }
        func touch(_ x: Double, _ y: Double, _ phase: String) -> OrderedDictionary<String, PlistValue> {
            ["type": .string("touch"), "phase": .string(phase), "x": .real(x), "y": .real(y), "view": .string("Posts")]
        }
        func frame(_ x: Double, _ y: Double, _ width: Double, _ height: Double) -> PlistValue {
            .dict(["x": .real(x), "y": .real(y), "width": .real(width), "height": .real(height)])
        }
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 64)
        try await send("UserInterfaceEvent", at: start, [
            "type": .string("viewDidAppear"), "view": .string("Posts"), "viewStack": .array([.string("Posts")]), "screenshot": .data(png),
        ])
        try await send("UserInputEvent", at: start + 1, touch(100, 100, "began"))
        try await send("UserInputEvent", at: start + 1.1, touch(100, 100, "ended"))
        for time in [1e18, -1e18, 1e300, .infinity, -.infinity, .nan] {
            try await send("UserInputEvent", at: time, touch(100, 100, "began"))
        }
        for (x, y) in [(Double.nan, 10.0), (1e300, -.infinity), (.infinity, .nan)] {
            try await send("UserInputEvent", at: start + 2, touch(x, y, "began"))
        }
        try await send("UserInterfaceEvent", at: start + 3, [
            "type": .string("viewDidAppear"), "view": .string("Edit"), "viewStack": .array([.string("Posts"), .string("Edit")]),
            "uiState": .dict(["className": .string("UIWindow"), "frame": frame(0, 0, .infinity, .nan), "subviews": .array([
                .dict(["className": .string("UIButton"), "title": .string("Publish"), "frame": frame(.nan, .infinity, 1e300, -1e300)]),
            ])]),
        ])
        // A voice stream whose third chunk comes 3×10⁸ s (ten years) after the second.
        var chunks = TestAudio(seconds: 3).chunks(stream: "voice-1", start: start, chunkSeconds: 1, firstSeq: nil)
        chunks[2].part = 3
        chunks[2].start = start + 3e8
        for chunk in chunks {
            var chunk = chunk
            chunk.seq = Int64(sent.count + 1)
            sent.append(chunk.seq!)
            try await device.send(WireEncoder.media(chunk))
        }
        try await send("CustomEvent", at: start + 4, ["name": .string("done")])
        try await device.waitForAck(sent.last!)

        // Every event and chunk has its answer: stored, or refused with an <error> naming its seq.
        let stored = Set(try SessionReader(path: session.path).events().compactMap(\.seq))
            .union(try SessionReader(path: session.path).mediaPage(afterID: 0, limit: 100, maxBytes: .max).compactMap { $0.chunk.seq })
        let refused = Set(device.errors.compactMap(\.seq))
        XCTAssertEqual(Set(sent).subtracting(stored).subtracting(refused), [], "seqs with no answer; errors: \(device.errors)")
        for error in device.errors { XCTAssertFalse(error.reason.isEmpty) }
        try await device.goodbye()
        await device.close()

        try writeWhatOldFilesHold(into: session.path, at: start)
        let console = try await loggedIn(daemon)
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))

        // The automatic report, then the replay index, in muevald.
        let report = try await eventually(timeout: 60, "the automatic report (log: \(daemon.log))") { () -> [String: Any]? in
            try alive(daemon)
            let state = try await console.request("GET", "/api/sessions/\(session.id)/report").json() as? [String: Any]
            return ["ready", "failed"].contains(state?["state"] as? String) ? state : nil
        }
        XCTAssertEqual(report["state"] as? String, "ready", "\(report)")
        let replay = try await console.request("GET", "/api/sessions/\(session.id)/replay")
        XCTAssertEqual(replay.status, 200, replay.text)
        let index = try XCTUnwrap(try replay.json() as? [String: Any], replay.text)
        let end = try XCTUnwrap(index["end"] as? Double)
        XCTAssertLessThan(end, start + 3600, "no event at an absurd time on the replay's scrubber")
        XCTAssertEqual((index["device"] as? [String: Any])?["screenWidth"] as? Double, nil, "an infinite screen is missing")

        // The transcription muevald queued at the stop finishes, one way or the other.
        try await finishedTranscription(of: session, daemon)

        let out = daemon.directory + "/out"
        let reported = try daemon.muevalctl(["report", String(session.id), "--out", out + "/report"])
        XCTAssertEqual(reported.status, 0, reported.stderr)
        let html = try String(contentsOfFile: out + "/report/index.html", encoding: .utf8)
        XCTAssertTrue(html.contains("left out, at no plausible time"), "the report says what it left out")

        let exported = try daemon.muevalctl(["export", String(session.id), "--format", "jsonl", "-o", out + "/absurd.jsonl"])
        XCTAssertEqual(exported.status, 0, exported.stderr)
        XCTAssertGreaterThan(try String(contentsOfFile: out + "/absurd.jsonl", encoding: .utf8).split(separator: "\n").count, 10)

        let media = try daemon.muevalctl(["media", String(session.id), "--out", out + "/media", "--json"])
        XCTAssertEqual(media.status, 0, media.stderr)
        let files = try JSONDecoder().decode(MediaSummary.self, from: Data(media.stdout.utf8)).files
        let voice = try XCTUnwrap(files.first { $0.stream.stream == "voice-1" }, media.stdout)
        XCTAssertLessThan(voice.bytes, 10 << 20, "ten years between two chunks are missing, not silence")

        let transcribe = try daemon.muevalctl(["transcribe", String(session.id)])
        XCTAssertEqual(transcribe.status, 0, transcribe.stderr)
        try await finishedTranscription(of: session, daemon)

        XCTAssertTrue(daemon.process.isRunning, "muevald died: \(daemon.log)")
        let status = try await daemon.ctl.call(ControlRequest.Status())
        XCTAssertNotNil(status.listen)
        let peak = try peakMemory(of: daemon.process.processIdentifier)
        XCTAssertLessThan(peak, peakMemoryBound, "muevald's peak resident memory (VmHWM)")
        print("AbsurdValuesTests: muevald's VmHWM \(peak >> 20) MiB")
    }

    /// What a session file recorded before values were checked at the edge may hold, written into the
    /// live file with the storage layer: events at absurd times and with NaN, infinite and 10³⁰⁰ values,
    /// an infinite and NaN screen, a gap at no time, a chunk of part 2⁶³ − 1 at an infinite start.
    private func writeWhatOldFilesHold(into path: String, at start: Double) throws {
        let database = try SQLiteDatabase(path: path)
        let nan = #"{"$real":"nan"}"#, inf = #"{"$real":"inf"}"#, minusInf = #"{"$real":"-inf"}"#
        var rows: [(time: String, eventClass: String, payload: String)] = []
        for time in ["1e18", "-1e18", "9e999", "-9e999", "1e300"] {
            rows.append((time, "UserInputEvent", #"{"type":"touch","phase":"began","x":100.0,"y":100.0,"view":"Posts"}"#))
            rows.append((time, "UserInterfaceEvent", #"{"type":"viewDidAppear","view":"Far","viewStack":["Far"]}"#))
        }
        rows.append(("\(start + 5)", "UserInputEvent", #"{"type":"touch","phase":"began","x":\#(nan),"y":1.0e300,"view":"Posts"}"#))
        rows.append(("\(start + 6)", "UserInputEvent", #"{"type":"gesture","gesture":"swipe","view":"Posts","path":[[\#(inf),1.0],[2.0,\#(minusInf)]]}"#))
        rows.append(("\(start + 7)", "UserInterfaceEvent", #"""
            {"type":"viewDidAppear","view":"Settings","viewStack":["Posts","Settings"],"uiState":{"className":"UIWindow",\#
            "frame":[0.0,0.0,\#(inf),\#(nan)],"subviews":[{"className":"UIButton","title":"Save","frame":{"x":\#(nan),"y":1.0e300,\#
            "width":\#(inf),"height":-1.0e300}},{"className":"UITextField","frame":{"x":\#(minusInf),"y":0.0,"width":10.0,"height":10.0}}]}}
            """#))
        rows.append(("\(start + 8)", "CustomEvent", #"{"name":"Publish","marker":"begin"}"#))
        rows.append(("\(start + 7.5)", "CustomEvent", #"{"name":"Publish","marker":"end"}"#))
        let values = rows.map { "('phone-1', '\($0.eventClass)', \($0.time), \(start), '\($0.payload)')" }.joined(separator: ",\n")
        try database.execute("""
            BEGIN;
            INSERT INTO events (device, class, timestamp, received, payload) VALUES \(values);
            UPDATE devices SET screen_width = 9e999, screen_height = -9e999, screen_scale = 9e999;
            INSERT INTO gaps (start, "end", reason) VALUES (1e300, 9e999, 'absurd'), (\(start + 2), 9e999, 'open ended');
            INSERT INTO media (device, stream, kind, content_type, part, start, duration, received, bytes)
                VALUES ('phone-1', 'voice-1', 'audio', 'audio/wav', 9223372036854775807, 9e999, -9e999, \(start), zeroblob(64000));
            COMMIT;
            """)
    }

    private func loggedIn(_ daemon: TestDaemon) async throws -> ConsoleClient {
        let link = try await daemon.consoleLink()
        let client = ConsoleClient(link: link.url)
        let reply = try await client.login(link.url)
        XCTAssertEqual(reply.status, 303, reply.text)
        return client
    }

    /// Waits until every stream's transcription is done or failed (with its error), muevald up meanwhile.
    private func finishedTranscription(of session: SessionRecord, _ daemon: TestDaemon) async throws {
        let statuses = try await eventually(timeout: 120, "the transcription (log: \(daemon.log))") { () -> [TranscriptionStatus]? in
            try alive(daemon)
            let statuses = try SessionReader(path: session.path).transcriptionStatus()
            return !statuses.isEmpty && statuses.allSatisfy({ $0.state == .done || $0.state == .failed }) ? statuses : nil
        }
        for status in statuses where status.state == .failed {
            XCTAssertFalse((status.error ?? "").isEmpty, "a failed transcription says why")
        }
    }

    private func alive(_ daemon: TestDaemon) throws {
        guard daemon.process.isRunning else { throw TestDaemonError.exited(status: daemon.process.terminationStatus, log: daemon.log) }
    }

    /// VmHWM of `pid`, in bytes.
    private func peakMemory(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let kilobytes = try XCTUnwrap(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        return kilobytes << 10
    }
}
