import CSQLite

/// A SQLite call that failed: its result code, SQLite's message and the statement. The one place C result
/// codes become a Swift error.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The extended result code (`SQLITE_IOERR_WRITE`, …); `primaryCode` is its low byte.
    public let resultCode: Int32
    public let message: String
    public let sql: String?

    init(resultCode: Int32, message: String, sql: String? = nil) {
        self.resultCode = resultCode
        self.message = message
        self.sql = sql
    }

    /// The primary result code (`SQLITE_FULL`, `SQLITE_IOERR`, `SQLITE_CONSTRAINT`, …).
    public var primaryCode: Int32 { resultCode & 0xff }

    /// The disk (or a file-size limit) is full, or the disk fails: both keep everything already committed.
    public var isWriteFailure: Bool { primaryCode == SQLITE_FULL || primaryCode == SQLITE_IOERR }

    public var isConstraintViolation: Bool { primaryCode == SQLITE_CONSTRAINT }

    public var description: String {
        let code = String(cString: sqlite3_errstr(resultCode))
        return "SQLite error \(resultCode) (\(code)): \(message)" + (sql.map { " in \"\($0)\"" } ?? "")
    }

    /// Throws the connection's last error when `result` is not one of `accepted`.
    static func check(_ result: Int32, _ connection: OpaquePointer?, sql: String? = nil, accepted: Set<Int32> = [SQLITE_OK]) throws(SQLiteError) {
        guard !accepted.contains(result) else { return }
        let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(result))
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? result
        // The extended code belongs to the same failure only when its primary part matches.
        throw SQLiteError(resultCode: extended & 0xff == result & 0xff ? extended : result, message: message, sql: sql)
    }
}
