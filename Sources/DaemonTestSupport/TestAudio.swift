public import MuEvalWire
internal import WireProtocol

/// Think-aloud audio for tests: a tone as 16-bit mono PCM WAV, cut into `<media>` chunks as a
/// recording device streams it (part 0 carries the header, its sizes unknown while recording).
public struct TestAudio: Sendable {
    public let sampleRate: Int
    public let samples: [Int16]

    /// `seconds` of a `frequency` Hz tone at a fifth of full scale.
    public init(seconds: Double, sampleRate: Int = 16_000, frequency: Double = 440) {
        self.sampleRate = sampleRate
        let count = Int(seconds * Double(sampleRate))
        var samples = [Int16](repeating: 0, count: count)
        var phase = 0.0
        let step = 2 * Double.pi * frequency / Double(sampleRate)
        for index in 0..<count {
            // A fast sine without Foundation: the Bhaskara approximation is close enough for a tone.
            let x = phase.truncatingRemainder(dividingBy: 2 * .pi)
            let half = x < .pi ? x : x - .pi
            let sine = 16 * half * (.pi - half) / (5 * .pi * .pi - 4 * half * (.pi - half))
            samples[index] = Int16((x < .pi ? sine : -sine) * 6553)
            phase += step
        }
        self.samples = samples
    }

    /// A recording of its own (speech from espeak-ng, noise): 16-bit mono samples at `sampleRate`.
    public init(samples: [Int16], sampleRate: Int) {
        self.sampleRate = sampleRate
        self.samples = samples
    }

    /// The RIFF/WAVE header; `dataBytes` nil writes the 0xFFFFFFFF sizes of a stream still recording.
    public func header(dataBytes: Int?) -> [UInt8] {
        WAVFile.header(sampleRate: sampleRate, dataBytes: dataBytes)
    }

    public var pcm: [UInt8] {
        samples.withUnsafeBytes { Array($0) }  // little-endian on every platform muEval runs on
    }

    /// The whole recording as the file an export should give back: header sizes set.
    public var file: [UInt8] { header(dataBytes: samples.count * 2) + pcm }

    /// The recording as chunks of `chunkSeconds`, starting at device time `start`, seqs from `firstSeq`
    /// (every `seqStride`-th, so events can take the seqs between).
    public func chunks(stream: String, start: Double, chunkSeconds: Double, firstSeq: Int64?, seqStride: Int64 = 1) -> [WireMedia] {
        let perChunk = Int(chunkSeconds * Double(sampleRate)) * 2
        let pcm = self.pcm
        var result: [WireMedia] = []
        var offset = 0
        while offset < pcm.count {
            let end = min(pcm.count, offset + perChunk)
            let part = Int64(result.count)
            let body = Array(pcm[offset..<end])
            result.append(WireMedia(stream: stream, format: .wav, part: part,
                                    start: start + Double(offset / 2) / Double(sampleRate),
                                    duration: Double(body.count / 2) / Double(sampleRate),
                                    seq: firstSeq.map { $0 + part * seqStride },
                                    bytes: part == 0 ? header(dataBytes: nil) + body : body))
            offset = end
        }
        return result
    }
}
