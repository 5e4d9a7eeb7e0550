internal import CSQLite

// A thin wrapper over the SQLite C API. The journal needs exactly three things from SQLite:
// prepared statements reused across a whole batch, zero-copy binding of payload bytes, and
// explicit transactions for group commit. The C API gives all three with no extra layer on
// the per-event path, so this file stays small instead of pulling in an ORM.

/// An error from SQLite, with the statement or operation that failed.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    public var code: Int32
    public var message: String
    public var context: String

    package init(code: Int32, message: String, context: String) {
        self.code = code
        self.message = message
        self.context = context
    }

    public var description: String { "\(context): \(message) (SQLite code \(code))" }

    /// The disk or the quota is full: the caller can retry once space is freed.
    public var isDiskFull: Bool { code & 0xff == SQLITE_FULL }

    /// SQLite's code for an I/O error, which a failed sync of the file system is too.
    package static let ioError = SQLITE_IOERR
}

/// One connection to one database file. Not thread-safe: each owner serialises its use.
public final class SQLiteDatabase {
    private(set) var handle: OpaquePointer?
    public let path: String

    public init(path: String, readOnly: Bool = false) throws {
        _ = sqliteConfigured
        self.path = path
        let flags = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        let code = sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            handle = nil
            throw SQLiteError(code: code, message: message, context: "cannot open \(path)")
        }
        sqlite3_extended_result_codes(handle, 1)
        // Readers and the writer of a WAL database may overlap briefly; wait instead of failing.
        sqlite3_busy_timeout(handle, 5_000)
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// Runs one or more SQL statements that return no rows.
    public func execute(_ sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if code != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(errorMessage)
            throw SQLiteError(code: code, message: message, context: "in \(path)")
        }
    }

    public func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw error(code, "cannot prepare \(sql.prefix(60))")
        }
        return SQLiteStatement(statement, database: self)
    }

    /// Runs `body` in a transaction that commits when it returns and rolls back when it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    func error(_ code: Int32, _ context: String) -> SQLiteError {
        SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)), context: context)
    }
}

/// A value to bind to a statement parameter.
public enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// A prepared statement; reset and reused for every row of a batch.
public final class SQLiteStatement {
    private let statement: OpaquePointer
    private let database: SQLiteDatabase

    init(_ statement: OpaquePointer, database: SQLiteDatabase) {
        self.statement = statement
        self.database = database
    }

    deinit {
        sqlite3_finalize(statement)
    }

    // MARK: Binding (1-based indexes, as in SQLite)

    public func bind(_ index: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(statement, index, value) } else { sqlite3_bind_null(statement, index) }
    }

    public func bind(_ index: Int32, _ value: Double?) {
        if let value { sqlite3_bind_double(statement, index, value) } else { sqlite3_bind_null(statement, index) }
    }

    public func bind(_ index: Int32, _ value: String?) {
        guard var value else {
            sqlite3_bind_null(statement, index)
            return
        }
        // Through the string's own UTF-8 with its length: passing the String as a C string would
        // allocate a NUL-terminated copy and SQLite would measure it again (two per event on the journal's path).
        value.withUTF8 { utf8 in
            bindText(index, utf8: UnsafeRawBufferPointer(utf8), copying: true)
        }
    }

    /// Binds UTF-8 bytes as TEXT. Unless `copying`, the bytes must stay alive until the statement is stepped and reset.
    public func bindText(_ index: Int32, utf8 bytes: UnsafeRawBufferPointer, copying: Bool = false) {
        if let base = bytes.baseAddress {
            // The 64-bit length: SQLite refuses what is too big (SQLITE_TOOBIG) where an Int32 would trap.
            sqlite3_bind_text64(statement, index, base.assumingMemoryBound(to: CChar.self), UInt64(truncatingIfNeeded: bytes.count),
                                copying ? sqliteTransient : nil, UInt8(SQLITE_UTF8))
        } else {
            sqlite3_bind_text(statement, index, "", 0, sqliteTransient)
        }
    }

    /// Binds bytes as a BLOB. The bytes must stay alive until the statement is stepped and reset.
    public func bindBlob(_ index: Int32, _ bytes: UnsafeRawBufferPointer) {
        sqlite3_bind_blob64(statement, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64(truncatingIfNeeded: bytes.count), nil)
    }

    public func bind(_ index: Int32, _ value: SQLiteValue) {
        switch value {
        case .null: sqlite3_bind_null(statement, index)
        case .integer(let v): sqlite3_bind_int64(statement, index, v)
        case .real(let v): sqlite3_bind_double(statement, index, v)
        case .text(let v): bind(index, v)
        case .blob(let v):
            _ = v.withUnsafeBytes { sqlite3_bind_blob64(statement, index, $0.baseAddress, UInt64(truncatingIfNeeded: $0.count), sqliteTransient) }
        }
    }

    public func bind(_ values: [SQLiteValue]) {
        // Past SQLite's 32,766 parameters the bind fails, as a clamped index does.
        for (offset, value) in values.enumerated() { bind(Int32(clamping: offset + 1), value) }
    }

    // MARK: Stepping

    /// Runs a statement that returns no rows, then resets it for reuse.
    public func run() throws {
        defer { sqlite3_reset(statement) }
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw database.error(code, "cannot run statement") }
    }

    /// Steps to the next row: true while a row is available. Reset with `reset()` when done.
    public func step() throws -> Bool {
        let code = sqlite3_step(statement)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw database.error(code, "cannot read rows")
        }
    }

    public func reset() {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    /// Calls `row` for every result row, then resets the statement.
    public func forEachRow(_ row: (SQLiteStatement) throws -> Void) throws {
        defer { reset() }
        while try step() { try row(self) }
    }

    // MARK: Columns (0-based indexes, as in SQLite)

    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    public func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    public func double(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }

    public func string(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(statement, column) else { return nil }
        return String(cString: text)
    }

    /// The column's bytes (TEXT or BLOB), copied.
    public func bytes(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let pointer = sqlite3_column_blob(statement, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}

/// Process-wide SQLite settings, applied once before the first database opens.
private let sqliteConfigured: Void = {
    _ = mueval_sqlite3_disable_memory_statistics()
}()

/// SQLite's SQLITE_TRANSIENT: "copy the value now". The C macro does not import into Swift.
private let sqliteTransient = unsafeBitCast(Int(-1), to: sqlite3_destructor_type.self)
