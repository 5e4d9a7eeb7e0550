internal import Foundation

extension StoredEvent {
    /// The event as one line of JSON: the stored columns, then the typed JSON payload spliced in
    /// as it is (re-encoding it would lose the integer/real distinction). Used by `export --format jsonl`
    /// and `muevalctl events --json`.
    public func jsonLine() -> [UInt8] {
        var meta = (try? JSONEncoder.sortedKeys.encode(ExportLine(self))) ?? Data("{}".utf8)
        meta.removeLast()
        return Array(meta) + Array(",\"payload\":".utf8) + Array(payload.utf8) + Array("}\n".utf8)
    }
}

extension JSONEncoder {
    fileprivate static var sortedKeys: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

private struct ExportLine: Encodable {
    var id: Int64
    var device: String
    var seq: Int64?
    var `class`: String
    var timestamp: Double
    var timestampEstimated: Bool
    var received: Double

    init(_ event: StoredEvent) {
        id = event.id
        device = event.device
        seq = event.seq
        self.class = event.eventClass
        timestamp = event.timestamp
        timestampEstimated = event.timestampEstimated
        received = event.received
    }
}
