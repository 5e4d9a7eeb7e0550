internal import MuEvalWire
internal import SessionModel
internal import Foundation

/// Column mapping of `SessionRecord`, shared by the catalog's `sessions` table and a session file's `session` table.
enum SessionRow {
    /// The columns both tables have, in this order.
    static let columns = "id, uuid, name, test_user, notes, sensors, bound_device, device, state, created, started, stopped, filtered, duplicates"

    static func values(_ session: SessionRecord) -> [SQLiteValue] {
        [.integer(session.id), .text(session.uuid), .text(session.name), text(session.testUser), text(session.notes),
         .text((try? JSONColumn.text(session.sensors)) ?? "[]"), text(session.boundDevice), text(session.device),
         .text(session.state.rawValue), .real(session.created), real(session.started), real(session.stopped),
         .integer(session.filtered), .integer(session.duplicates)]
    }

    /// Reads the columns above, starting at column 0; `path` and `events` come from elsewhere.
    static func read(_ row: SQLiteStatement, path: String, events: Int64) -> SessionRecord {
        SessionRecord(
            id: row.int64(0), uuid: row.string(1) ?? "", name: row.string(2) ?? "",
            testUser: row.string(3), notes: row.string(4), sensors: JSONColumn.value([String].self, row.string(5)) ?? [],
            boundDevice: row.string(6), device: row.string(7),
            state: SessionState(rawValue: row.string(8) ?? "") ?? .stopped,
            created: row.double(9), started: optionalDouble(row, 10), stopped: optionalDouble(row, 11),
            path: path, events: events, filtered: row.int64(12), duplicates: row.int64(13))
    }
}

/// Column mapping of `DeviceRecord`, shared by the catalog and session files.
enum DeviceRow {
    static let columns = "device, name, model, system_version, app_id, app_version, screen_width, screen_height, screen_scale, address, first_seen, last_seen"

    /// Inserts a device or refreshes it, keeping what an earlier hello said when this one says less.
    static let upsert = """
        INSERT INTO devices (\(columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(device) DO UPDATE SET
            name = COALESCE(excluded.name, name), model = COALESCE(excluded.model, model),
            system_version = COALESCE(excluded.system_version, system_version),
            app_id = COALESCE(excluded.app_id, app_id), app_version = COALESCE(excluded.app_version, app_version),
            screen_width = COALESCE(excluded.screen_width, screen_width),
            screen_height = COALESCE(excluded.screen_height, screen_height),
            screen_scale = COALESCE(excluded.screen_scale, screen_scale),
            address = COALESCE(excluded.address, address), last_seen = excluded.last_seen
        """

    static func values(_ device: DeviceRecord) -> [SQLiteValue] {
        [.text(device.id), text(device.name), text(device.model), text(device.systemVersion), text(device.appId),
         text(device.appVersion), real(device.screenWidth), real(device.screenHeight), real(device.screenScale),
         text(device.address), .real(device.firstSeen), .real(device.lastSeen)]
    }

    static func read(_ row: SQLiteStatement) -> DeviceRecord {
        DeviceRecord(
            id: row.string(0) ?? "",
            device: DeviceDescription(name: row.string(1), model: row.string(2), systemVersion: row.string(3),
                                      appId: row.string(4), appVersion: row.string(5), screenWidth: optionalDouble(row, 6),
                                      screenHeight: optionalDouble(row, 7), screenScale: optionalDouble(row, 8)),
            address: row.string(9), firstSeen: row.double(10), lastSeen: row.double(11))
    }
}

/// Column mapping of `SessionImportRecord`, shared by the catalog's `session_imports` (which adds
/// `session` in front) and a session file's `imports`.
enum ImportRow {
    static let columns = "file, format, sha256, imported, events, cut_short"
    static let placeholders = "?, ?, ?, ?, ?, ?"

    static func values(_ source: SessionImportRecord) -> [SQLiteValue] {
        [.text(source.file), .text(source.format.rawValue), .text(source.sha256), .real(source.imported),
         .integer(source.events), text(source.cutShort)]
    }

    /// Reads the columns above, starting at column `first`.
    static func read(_ row: SQLiteStatement, from first: Int32 = 0) -> SessionImportRecord {
        SessionImportRecord(
            file: row.string(first) ?? "", format: ImportFormat(rawValue: row.string(first + 1) ?? "") ?? .jsonl,
            sha256: row.string(first + 2) ?? "", imported: row.double(first + 3), events: row.int64(first + 4),
            cutShort: row.string(first + 5))
    }
}

func text(_ value: String?) -> SQLiteValue { value.map { .text($0) } ?? .null }
private func real(_ value: Double?) -> SQLiteValue { value.map { .real($0) } ?? .null }
func optionalDouble(_ row: SQLiteStatement, _ column: Int32) -> Double? { row.isNull(column) ? nil : row.double(column) }

/// JSON in a TEXT column (a session's sensors, a study's lists and attributes, a session file's study
/// context): keys sorted, so that equal values are stored as equal text.
enum JSONColumn {
    static func text<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Nil for no text, or text that is not such a value.
    static func value<T: Decodable>(_ type: T.Type, _ text: String?) -> T? {
        text.flatMap { try? JSONDecoder().decode(type, from: Data($0.utf8)) }
    }
}
