import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// A SQLite call that failed: its result code, SQLite's message and the statement. The one place C result
/// codes become a Swift error.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The extended result code (`SQLITE_IOERR_WRITE`, …); `primaryCode` is its low byte.
    public let resultCode: Int32
    public let message: String
    public let sql: String?
    /// The operating system's errno behind an I/O failure (`sqlite3_system_errno`: ENOSPC, EROFS, EIO), 0 when none:
    /// SQLite reports a read-only remount as a plain `SQLITE_IOERR_WRITE`, the errno tells it from a failing disk.
    public let systemErrno: Int32

    init(resultCode: Int32, message: String, sql: String? = nil, systemErrno: Int32 = 0) {
        self.resultCode = resultCode
        self.message = message
        self.sql = sql
        self.systemErrno = systemErrno
    }

    /// The primary result code (`SQLITE_FULL`, `SQLITE_IOERR`, `SQLITE_CONSTRAINT`, …).
    public var primaryCode: Int32 { resultCode & 0xff }

    /// The disk (or a file-size limit) is full, or the disk fails: both keep everything already committed.
    public var isWriteFailure: Bool { primaryCode == SQLITE_FULL || primaryCode == SQLITE_IOERR || primaryCode == SQLITE_READONLY }

    /// What a failed write says of the disk under it, from the errno first (SQLite reports a read-only remount as
    /// an I/O error, a full disk sometimes too), then the result code; nil for a failure that is not the disk's.
    public var diskFailure: DiskFailure? {
        guard [SQLITE_FULL, SQLITE_IOERR, SQLITE_READONLY, SQLITE_CANTOPEN].contains(primaryCode) else { return nil }
        if let failure = DiskFailure(errno: systemErrno) { return failure }
        switch primaryCode {
        case SQLITE_FULL: return .full
        case SQLITE_READONLY: return .readOnly
        case SQLITE_IOERR: return .failing
        default: return nil
        }
    }

    #if DEBUG
    /// The error SQLite gives for a write that met `errno` (tests' failing disk).
    static func injected(errno: Int32) -> SQLiteError {
        errno == ENOSPC
            ? SQLiteError(resultCode: SQLITE_FULL, message: "database or disk is full", systemErrno: errno)
            : SQLiteError(resultCode: SQLITE_IOERR | (3 << 8), message: "disk I/O error", systemErrno: errno)
    }
    #endif

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
        throw SQLiteError(
            resultCode: extended & 0xff == result & 0xff ? extended : result, message: message, sql: sql,
            systemErrno: connection.map { sqlite3_system_errno($0) } ?? 0)
    }
}

/// Why the disk refused a write.
public enum DiskFailure: Sendable, Equatable {
    /// No space left (or a quota or file-size limit).
    case full
    /// A read-only file system (a remount after an error) or file.
    case readOnly
    /// The device answers with I/O errors.
    case failing

    /// The failure an errno means, nil for one that is not about the disk (EACCES, ENOENT, …).
    public init?(errno: Int32) {
        switch errno {
        case ENOSPC, EDQUOT, EFBIG: self = .full
        case EROFS: self = .readOnly
        case EIO: self = .failing
        default: return nil
        }
    }
}
