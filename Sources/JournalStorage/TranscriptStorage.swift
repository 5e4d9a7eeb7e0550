public import SessionModel

/// The transcripts of a session's audio streams and how far their transcription is, as the file holds
/// them (docs/STORAGE.md): read by reports and the console, written by the transcription service.
extension SessionReader {
    /// The transcript of every audio stream, by start.
    public func transcript() throws -> [TranscriptSegment] {
        guard try hasTable("transcripts") else { return [] }
        let statement = try database.prepare("""
            SELECT device, stream, start, "end", text, confidence, exclamation FROM transcripts ORDER BY start, id
            """)
        var result: [TranscriptSegment] = []
        try statement.forEachRow { row in
            result.append(TranscriptSegment(device: row.string(0) ?? "", stream: row.string(1) ?? "",
                                            start: row.double(2), end: row.double(3), text: row.string(4) ?? "",
                                            confidence: optionalDouble(row, 5), exclamation: row.string(6)))
        }
        return result
    }

    /// The words of every audio stream's transcript with their times, by start: empty where the recogniser gives none
    /// (PocketSphinx) or the file predates them.
    public func transcriptWords() throws -> [TranscriptWord] {
        guard try hasTable("transcript_words") else { return [] }
        let statement = try database.prepare("""
            SELECT device, stream, start, "end", word, probability FROM transcript_words ORDER BY start, id
            """)
        var result: [TranscriptWord] = []
        try statement.forEachRow { row in
            result.append(TranscriptWord(device: row.string(0) ?? "", stream: row.string(1) ?? "", start: row.double(2), end: row.double(3),
                                         text: row.string(4) ?? "", probability: optionalDouble(row, 5)))
        }
        return result
    }

    /// How far each audio stream's transcription is, as last written into the file.
    public func transcriptionStatus() throws -> [TranscriptionStatus] {
        guard try hasTable("transcription") else { return [] }
        let statement = try database.prepare("""
            SELECT device, stream, state, progress, engine, error, updated FROM transcription ORDER BY device, stream
            """)
        var result: [TranscriptionStatus] = []
        try statement.forEachRow { row in
            result.append(TranscriptionStatus(
                device: row.string(0) ?? "", stream: row.string(1) ?? "",
                state: TranscriptionStatus.State(rawValue: row.string(2) ?? "") ?? .failed,
                progress: row.double(3), engine: row.string(4), error: row.string(5), updated: row.double(6)))
        }
        return result
    }
}

extension SessionFile {
    /// Replaces the transcript of one stream and its words' times (a new transcription of it replaces the old one whole:
    /// a transcription without words' times leaves none of the one before). The words' table is made on first use.
    public func writeTranscript(device: String, stream: String, segments: [TranscriptSegment], words: [TranscriptWord] = []) throws {
        try database.transaction {
            try database.execute("""
                CREATE TABLE IF NOT EXISTS transcript_words (
                    id INTEGER PRIMARY KEY, device TEXT NOT NULL, stream TEXT NOT NULL, start REAL NOT NULL, "end" REAL NOT NULL,
                    word TEXT NOT NULL, probability REAL)
                """)
            for table in ["transcripts", "transcript_words"] {
                let delete = try database.prepare("DELETE FROM \(table) WHERE device = ? AND stream = ?")
                delete.bind(1, device)
                delete.bind(2, stream)
                try delete.run()
            }
            let word = try database.prepare("""
                INSERT INTO transcript_words (device, stream, start, "end", word, probability) VALUES (?, ?, ?, ?, ?, ?)
                """)
            for timed in words {
                word.bind([.text(device), .text(stream), .real(timed.start), .real(timed.end), .text(timed.text),
                           timed.probability.map { .real($0) } ?? .null])
                try word.run()
            }
            let insert = try database.prepare("""
                INSERT INTO transcripts (device, stream, start, "end", text, confidence, exclamation)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
            for segment in segments {
                insert.bind([.text(device), .text(stream), .real(segment.start), .real(segment.end), .text(segment.text),
                             segment.confidence.map { .real($0) } ?? .null, text(segment.exclamation)])
                try insert.run()
            }
        }
    }

    public func writeTranscriptionStatus(_ status: TranscriptionStatus) throws {
        let statement = try database.prepare("""
            INSERT INTO transcription (device, stream, state, progress, engine, error, updated) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(device, stream) DO UPDATE SET state = excluded.state, progress = excluded.progress,
                engine = excluded.engine, error = excluded.error, updated = excluded.updated
            """)
        statement.bind([.text(status.device), .text(status.stream), .text(status.state.rawValue), .real(status.progress),
                        text(status.engine), text(status.error), .real(status.updated)])
        try statement.run()
    }
}
