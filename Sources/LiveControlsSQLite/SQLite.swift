import CSQLite

/// A SQLite failure: the result code and SQLite's message.
public struct SQLiteError: Error, CustomStringConvertible {
    public var code: Int32
    public var message: String
    public var description: String { "SQLite error \(code): \(message)" }
}

/// One SQLite connection. Not thread-safe: its owner uses it from one serial queue only.
final class SQLiteDatabase {
    let handle: OpaquePointer

    init(path: String) throws {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close(db)
            throw SQLiteError(code: rc, message: "\(path): \(message)")
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 5000)
    }

    deinit { sqlite3_close_v2(handle) }

    func check(_ rc: Int32) throws {
        guard rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE else {
            throw SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)))
        }
    }

    func execute(_ sql: String) throws {
        try check(sqlite3_exec(handle, sql, nil, nil, nil))
    }

    func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil))
        return SQLiteStatement(handle: statement!, database: self)
    }

    /// A one-row, one-column text query (`PRAGMA journal_mode=WAL` answers `wal`).
    func text(_ sql: String) throws -> String? {
        let statement = try prepare(sql)
        return try statement.step() ? statement.text(0) : nil
    }
}

/// A prepared statement, reset after each use.
final class SQLiteStatement {
    let handle: OpaquePointer
    unowned let database: SQLiteDatabase

    init(handle: OpaquePointer, database: SQLiteDatabase) {
        self.handle = handle
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    @discardableResult
    func bind(_ values: [SQLiteValue]) throws -> SQLiteStatement {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (i, value) in values.enumerated() {
            let index = Int32(i + 1)
            switch value {
            case let .int(v): try database.check(sqlite3_bind_int64(handle, index, Int64(v)))
            case let .text(v): try database.check(sqlite3_bind_text(handle, index, v, -1, csqlite_transient()))
            case .null: try database.check(sqlite3_bind_null(handle, index))
            }
        }
        return self
    }

    /// Runs to completion (INSERT, UPDATE, DELETE).
    func run(_ values: [SQLiteValue] = []) throws {
        try bind(values)
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    /// One step; true while there is a row.
    func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        try database.check(rc)
        return rc == SQLITE_ROW
    }

    func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }

    func text(_ column: Int32) -> String? {
        guard let p = sqlite3_column_text(handle, column) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: p, count: Int(sqlite3_column_bytes(handle, column))), as: UTF8.self)
    }

    /// Every row of a query, mapped.
    func rows<T>(_ values: [SQLiteValue] = [], _ map: (SQLiteStatement) throws -> T) throws -> [T] {
        try bind(values)
        defer { sqlite3_reset(handle) }
        var result: [T] = []
        while try step() { result.append(try map(self)) }
        return result
    }
}

enum SQLiteValue {
    case int(Int)
    case text(String)
    case null
}
