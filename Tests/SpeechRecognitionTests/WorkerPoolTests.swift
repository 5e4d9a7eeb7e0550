@testable import SpeechRecognition
import Testing

/// The workers load their decoders on their own threads, after the transcription has begun: a worker
/// that cannot load must end it with its reason, not leave the reader waiting for it.
struct WorkerPoolTests {
    @Test func aWorkerThatCannotLoadEndsTheTranscriptionWithItsReason() throws {
        let configuration = SpeechConfiguration(workers: 2, decoderOptions: ["-no_such_option", "1"])
        let pool = WorkerPool(configuration: configuration, dictionary: configuration.dictionary, spare: nil)
        defer { pool.finish() }
        // More pieces than the queues hold: the reader must not block on the workers that never came.
        for offset in 0..<4 { pool.submit(Piece(offset: offset * 16_000, samples: [Int16](repeating: 0, count: 16_000))) }
        let error = #expect(throws: SpeechError.self) { try pool.wait {} }
        #expect(error?.description.contains("-no_such_option") == true)
    }
}
