import CSQLite
import FoundationEssentials

/// One SQLite connection. Not thread-safe: `DatabasePool` hands it to one caller at a time.
public final class Database {
    let handle: OpaquePointer
    public let path: String
    /// Prepared statements by SQL text: the hot paths (a ping insert, a transition's commit) run the same few
    /// statements again and again, and preparing costs more than running them.
    private var statements: [String: OpaquePointer] = [:]
    private static let maxCachedStatements = 64
    /// A prepared query's column names, read once (again if a schema change gave `SELECT *` another column count).
    private var columnNamesByStatement: [OpaquePointer: [String]] = [:]

    /// A record type's insert and save statements, by type: building their text (a dozen joined column names)
    /// each time cost more than SQLite took to run them.
    private var recordStatements: [RecordStatementKey: (columns: [String], sql: String)] = [:]
    #if DEBUG
    /// Tests' failing disk (`DatabasePool.injectWriteFailure`): a transaction that changed rows fails at its COMMIT
    /// as SQLite reports that errno, and is rolled back; reads go on, as on a real full or read-only disk.
    var injectedFailure: Int32?
    #endif

    enum RecordOperation { case insert, insertIfAbsent, save }

    private struct RecordStatementKey: Hashable {
        let type: ObjectIdentifier
        let operation: RecordOperation
    }

    /// Opens (creating when `readOnly` is false) the database file at `path`. A process's own database is a
    /// `DatabasePool`; a lone connection is for tools that look into one (read-only).
    public init(path: String, readOnly: Bool) throws(SQLiteError) {
        var handle: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(path, &handle, flags, nil)
        guard result == SQLITE_OK, let handle else {
            defer { sqlite3_close_v2(handle) }
            try SQLiteError.check(result, handle, sql: nil)
            throw SQLiteError(resultCode: result, message: "cannot open \(path)")
        }
        self.handle = handle
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// Waits up to `milliseconds` for another connection's lock instead of failing at once.
    public func setBusyTimeout(milliseconds: Int32) { sqlite3_busy_timeout(handle, milliseconds) }

    /// The SQL text of `type`'s `operation` for these columns: made once, and again only if a record of the type
    /// encodes other columns.
    func recordSQL(
        _ type: Any.Type, _ operation: RecordOperation, _ columns: [(name: String, value: DatabaseValue)], make: () -> String
    ) -> String {
        let key = RecordStatementKey(type: ObjectIdentifier(type), operation: operation)
        if let cached = recordStatements[key], cached.columns.elementsEqual(columns.lazy.map(\.name)) { return cached.sql }
        let sql = make()
        recordStatements[key] = (columns.map(\.name), sql)
        return sql
    }

    /// Runs one or more statements without arguments (migrations, pragmas).
    public func execute(sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &message)
        guard result != SQLITE_OK else { return }
        let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(result))
        sqlite3_free(message)
        throw SQLiteError(resultCode: sqlite3_extended_errcode(handle), message: text, sql: sql, systemErrno: sqlite3_system_errno(handle))
    }

    /// Runs one statement with `arguments` bound to its placeholders.
    public func execute(sql: String, arguments: StatementArguments) throws(SQLiteError) {
        try withStatement(sql, arguments) { statement throws(SQLiteError) in
            while try step(statement, sql) {}
        }
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changesCount: Int { Int(sqlite3_changes(handle)) }

    public var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows this connection has inserted, updated or deleted since it opened.
    public var totalChangesCount: Int { Int(sqlite3_total_changes(handle)) }

    public var isInsideTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Every row of a query.
    public func rows(sql: String, arguments: StatementArguments = []) throws(SQLiteError) -> [Row] {
        try withStatement(sql, arguments) { statement throws(SQLiteError) in
            let columns = columnNames(statement)
            var rows: [Row] = []
            while try step(statement, sql) {
                rows.append(Row(columns: columns, values: columns.indices.map { Self.value(statement, Int32($0)) }))
            }
            return rows
        }
    }

    public func row(sql: String, arguments: StatementArguments = []) throws(SQLiteError) -> Row? {
        try rows(sql: sql, arguments: arguments).first
    }

    /// The first column of the first row: nil when there is no row, or its value is NULL or of another type.
    public func value<Value: DatabaseValueConvertible>(
        _ type: Value.Type, sql: String, arguments: StatementArguments = []
    ) throws(SQLiteError) -> Value? {
        // One step, one column: no rows built.
        try withStatement(sql, arguments) { statement throws(SQLiteError) in
            try step(statement, sql) ? Value(databaseValue: Self.value(statement, 0)) : nil
        }
    }

    /// The first column of every row (NULLs and values of another type left out).
    public func values<Value: DatabaseValueConvertible>(
        _ type: Value.Type, sql: String, arguments: StatementArguments = []
    ) throws(SQLiteError) -> [Value] {
        try rows(sql: sql, arguments: arguments).compactMap { $0.values.first.flatMap { Value(databaseValue: $0) } }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    public func inTransaction<T>(immediate: Bool = true, _ body: () throws -> T) throws -> T {
        // Prepared once and kept, like every statement run with arguments: a transition's commit is three
        // statements, and parsing them each time would cost as much as running them.
        try execute(sql: immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED", arguments: [])
        #if DEBUG
        let changesAtBegin = totalChangesCount
        #endif
        do {
            let result = try body()
            #if DEBUG
            if let errno = injectedFailure, totalChangesCount != changesAtBegin { throw SQLiteError.injected(errno: errno) }
            #endif
            try execute(sql: "COMMIT", arguments: [])
            return result
        } catch {
            // A failed COMMIT (disk full) leaves the transaction open; a failed statement may already have
            // ended it. Either way nothing of it stays; the first error is the one that explains, so it is thrown.
            if isInsideTransaction { try? execute(sql: "ROLLBACK", arguments: []) }
            throw error
        }
    }

    // MARK: Statements

    private func withStatement<T>(
        _ sql: String, _ arguments: StatementArguments, _ body: (OpaquePointer) throws(SQLiteError) -> T
    ) throws(SQLiteError) -> T {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        let expected = Int(sqlite3_bind_parameter_count(statement))
        guard expected == arguments.count else {
            throw SQLiteError(resultCode: SQLITE_RANGE, message: "\(arguments.count) arguments for \(expected) placeholders", sql: sql)
        }
        for (offset, argument) in arguments.enumerated() {
            try SQLiteError.check(Self.bind(argument.databaseValue, statement, Int32(offset + 1)), handle, sql: sql)
        }
        return try body(statement)
    }

    private func prepared(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        // The tail points into the C string, so it is read before that goes away.
        let (result, trailing) = sql.withCString { text in
            var tail: UnsafePointer<CChar>?
            let result = sqlite3_prepare_v3(handle, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, &tail)
            return (result, tail.map { String(cString: $0) } ?? "")
        }
        try SQLiteError.check(result, handle, sql: sql)
        guard let statement else { throw SQLiteError(resultCode: SQLITE_MISUSE, message: "no statement", sql: sql) }
        guard trailing.allSatisfy({ $0.isWhitespace || $0 == ";" }) else {
            sqlite3_finalize(statement)
            throw SQLiteError(resultCode: SQLITE_MISUSE, message: "one statement at a time with arguments", sql: sql)
        }
        // Statements built with a placeholder per id (`IN (?, ?, …)`) differ run to run: the cache stays small.
        if statements.count >= Self.maxCachedStatements, let (oldSQL, old) = statements.first {
            sqlite3_finalize(old)
            statements[oldSQL] = nil
            columnNamesByStatement[old] = nil
        }
        statements[sql] = statement
        return statement
    }

    private func columnNames(_ statement: OpaquePointer) -> [String] {
        if let names = columnNamesByStatement[statement], names.count == Int(sqlite3_column_count(statement)) { return names }
        let names = (0..<sqlite3_column_count(statement)).map { String(cString: sqlite3_column_name(statement, $0)) }
        columnNamesByStatement[statement] = names
        return names
    }

    /// True while the statement yields rows.
    private func step(_ statement: OpaquePointer, _ sql: String) throws(SQLiteError) -> Bool {
        let result = sqlite3_step(statement)
        if result == SQLITE_ROW { return true }
        try SQLiteError.check(result, handle, sql: sql, accepted: [SQLITE_DONE])
        return false
    }

    private static func bind(_ value: DatabaseValue, _ statement: OpaquePointer, _ index: Int32) -> Int32 {
        switch value {
        case .null: sqlite3_bind_null(statement, index)
        case .integer(let value): sqlite3_bind_int64(statement, index, value)
        case .real(let value): sqlite3_bind_double(statement, index, value)
        case .text(let value):
            value.utf8CString.withUnsafeBufferPointer { csqlite_bind_text(statement, index, $0.baseAddress, Int32($0.count - 1)) }
        case .blob(let value):
            // A zero-length blob is still a blob, not NULL: SQLite needs a non-null pointer for that.
            value.isEmpty
                ? sqlite3_bind_zeroblob(statement, index, 0)
                : value.withUnsafeBytes { csqlite_bind_blob(statement, index, $0.baseAddress, Int32($0.count)) }
        }
    }

    private static func value(_ statement: OpaquePointer, _ column: Int32) -> DatabaseValue {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(statement, column))
            guard let bytes = sqlite3_column_text(statement, column) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, column))
            guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: count))
        default: return .null
        }
    }
}
