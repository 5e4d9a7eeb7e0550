import MuEvalWire
import Testing
import WireProtocol

/// `<media>`: think-aloud audio and face video chunks (docs/PROTOCOL.md, "Media").
struct MediaMessageTests {
    static let wavHeader = WAVFile.header(sampleRate: 16_000, dataBytes: nil)

    static let chunk = WireMedia(stream: "voice-1", format: .wav, part: 0, start: 1_700_000_000.25, duration: 0.5, seq: 7,
                                 bytes: wavHeader + (0..<2000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    @Test func encodedChunkDecodesToTheSameChunk() {
        let results = decodeAll(WireEncoder.media(Self.chunk))
        #expect(results == [.success(.media(Self.chunk))])
    }

    /// Events and chunks on one connection, the stream split at every byte: the same messages in the same order.
    @Test func splitAtEveryByteBetweenEvents() {
        var stream = WireEncoder.event(["class": .string("UserInputEvent"), "seq": .integer(6)])
        stream += WireEncoder.media(Self.chunk)
        stream += WireEncoder.event(["class": .string("UserInputEvent"), "seq": .integer(8)])
        let reference = decodeAll(stream)
        #expect(summary(reference) == ["event UserInputEvent", "media voice-1 0", "event UserInputEvent"])
        for offset in 0...stream.count {
            #expect(decodeSplit(stream, at: offset) == reference, "split at \(offset)")
        }
    }

    @Test func contentTypeAliasesAndParametersAreAccepted() {
        #expect(MediaFormat(contentType: "audio/x-wav") == .wav)
        #expect(MediaFormat(contentType: "Audio/WAVE") == .wav)
        #expect(MediaFormat(contentType: "audio/mp4; codecs=\"mp4a.40.2\"") == .aacMP4)
        #expect(MediaFormat(contentType: "video/mp4;codecs=avc1.42E01E") == .h264MP4)
        #expect(MediaFormat(contentType: "audio/ogg") == nil)
        #expect(MediaFormat.h264MP4.kind == .video)
        #expect(MediaKind.audio.sensor == "microphone")
        #expect(MediaKind.video.sensor == "faceCamera")
    }

    @Test func unknownContentTypeIsRefusedNamingTheTypesAndTheSeq() throws {
        let results = decodeAll("""
            <media><key>stream</key><string>v</string><key>contentType</key><string>audio/ogg</string>\
            <key>part</key><integer>0</integer><key>start</key><real>1</real><key>seq</key><integer>12</integer>\
            <key>data</key><data>AAAA</data></media>
            <event><key>class</key><string>After</string></event>
            """)
        #expect(results.count == 2)
        guard case .failure(let error) = results[0] else { Issue.record("expected an error, got \(results[0])"); return }
        #expect(error.kind == .unsupportedMedia)
        #expect(error.seq == 12)
        #expect(error.message.contains("audio/ogg") && error.message.contains("audio/wav"))
        #expect(summary([results[1]]) == ["event After"], "the connection goes on")
    }

    @Test func kindContradictingTheContentTypeIsRefused() {
        let results = decodeAll("""
            <media><key>stream</key><string>v</string><key>kind</key><string>video</string>\
            <key>contentType</key><string>audio/wav</string><key>part</key><integer>0</integer>\
            <key>start</key><real>1</real><key>data</key><data>AAAA</data></media>
            """)
        #expect(summary(results) == ["unsupportedMedia"])
    }

    @Test func chunkOverTheLimitIsRefusedAndTheNextMessageDecodes() {
        var big = Self.chunk
        big.bytes = [UInt8](repeating: 1, count: 4096)
        var stream = WireEncoder.media(big)
        stream += WireEncoder.goodbye()
        let results = decodeAll(stream, limits: WireLimits(maxMediaChunkBytes: 4095))
        #expect(summary(results) == ["messageTooLarge", "goodbye"])
        guard case .failure(let error) = results[0] else { return }
        #expect(error.message.contains("4096 bytes, more than the 4095 allowed"))
        #expect(error.seq == 7)
    }

    @Test(arguments: [
        ("stream", "<media><key>contentType</key><string>audio/wav</string><key>part</key><integer>0</integer><key>start</key><real>1</real><key>data</key><data>AAAA</data></media>"),
        ("part", "<media><key>stream</key><string>v</string><key>contentType</key><string>audio/wav</string><key>start</key><real>1</real><key>data</key><data>AAAA</data></media>"),
        ("start", "<media><key>stream</key><string>v</string><key>contentType</key><string>audio/wav</string><key>part</key><integer>0</integer><key>data</key><data>AAAA</data></media>"),
        ("data", "<media><key>stream</key><string>v</string><key>contentType</key><string>audio/wav</string><key>part</key><integer>0</integer><key>start</key><real>1</real></media>"),
    ])
    func missingFieldIsNamed(field: String, xml: String) {
        let results = decodeAll(xml)
        guard results.count == 1, case .failure(let error) = results[0] else {
            Issue.record("expected one error, got \(results)")
            return
        }
        #expect(error.kind == .invalidValue)
        #expect(error.message.contains("\"\(field)\""), "\(error.message)")
    }

    @Test func startMayBeADate() throws {
        let results = decodeAll("""
            <media><key>stream</key><string>v</string><key>contentType</key><string>video/mp4</string>\
            <key>part</key><integer>3</integer><key>start</key><date>2011-02-19T22:43:06Z</date><key>data</key><data>AAAA</data></media>
            """)
        guard case .success(.media(let media)) = results.first else { Issue.record("\(results)"); return }
        #expect(media.start == 1_298_155_386)
        #expect(media.part == 3)
        #expect(media.kind == .video)
        #expect(media.seq == nil)
        #expect(media.bytes == [0, 0, 0])
    }

    @Test func selectionChoosesMediaByTheirSensor() {
        #expect(SensorSelection([]).selects(.audio))
        #expect(SensorSelection(["microphone"]).selects(.audio))
        #expect(!SensorSelection(["microphone"]).selects(.video))
        #expect(!SensorSelection(["UserInputEvent"]).selects(.audio))
    }
}
