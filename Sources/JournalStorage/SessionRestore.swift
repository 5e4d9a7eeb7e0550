package import SessionModel

extension SessionFile {
    /// Events as another store kept them, under their own ids (replication reads a session back out
    /// of PostgreSQL into a file: the same ids make the same report), in one transaction.
    package func restore(events: [StoredEvent]) throws {
        let statement = try database.prepare("""
            INSERT INTO events (id, device, seq, class, timestamp, timestamp_estimated, received, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        try database.transaction {
            for event in events {
                statement.bind([.integer(event.id), .text(event.device), event.seq.map { .integer($0) } ?? .null, .text(event.eventClass),
                                .real(event.timestamp), .integer(event.timestampEstimated ? 1 : 0), .real(event.received), .text(event.payload)])
                try statement.run()
            }
        }
    }

    /// Media chunks under their own ids, in one transaction.
    package func restore(media: [(id: Int64, chunk: StoredMediaChunk)]) throws {
        let statement = try database.prepare("""
            INSERT INTO media (id, device, seq, stream, kind, content_type, part, start, duration, received, bytes)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        try database.transaction {
            for (id, chunk) in media {
                statement.bind([.integer(id), .text(chunk.device), chunk.seq.map { .integer($0) } ?? .null, .text(chunk.stream),
                                .text(chunk.kind), .text(chunk.contentType), .integer(chunk.part), .real(chunk.start),
                                chunk.duration.map { .real($0) } ?? .null, .real(chunk.received)])
                try chunk.bytes.withUnsafeBytes { bytes in
                    statement.bindBlob(11, bytes)
                    try statement.run()
                }
            }
        }
    }
}
