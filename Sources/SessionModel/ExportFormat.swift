public enum ExportFormat: String, Sendable, CaseIterable, Codable {
    /// One Apple XML property list whose root array holds every event as sent, `data` values included.
    case plist
    /// One JSON object per line: the stored columns plus the typed JSON payload (`data` as SHA-256 references).
    case jsonl
}
