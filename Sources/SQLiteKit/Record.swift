/// A Codable type stored as one row of one table: its coding keys are the column names.
public protocol TableRecord: Codable {
    static var tableName: String { get }
    /// The primary key's columns (default `id`).
    static var primaryKey: [String] { get }
}

extension TableRecord {
    public static var primaryKey: [String] { ["id"] }

    // MARK: Writing

    /// Inserts the record as a new row; returns its row id (the id SQLite gave a nil `INTEGER PRIMARY KEY`).
    @discardableResult
    public func insert(_ db: Database) throws -> Int64 {
        try insert(db, .insert)
        return db.lastInsertedRowID
    }

    /// Inserts the record unless a row with its key (or another unique value) exists; true when it inserted.
    @discardableResult
    public func insertIfAbsent(_ db: Database) throws -> Bool {
        try insert(db, .insertIfAbsent)
        return db.changesCount > 0
    }

    private func insert(_ db: Database, _ operation: Database.RecordOperation) throws {
        let columns = try RowEncoder.columns(of: self)
        let sql = db.recordSQL(Self.self, operation, columns) {
            "INSERT \(operation == .insertIfAbsent ? "OR IGNORE " : "")INTO \(Self.tableName) (\(columns.map(\.name).joined(separator: ", "))) "
                + "VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
        }
        try db.execute(sql: sql, arguments: columns.map(\.value))
    }

    /// Inserts the row, or updates every other column of the row with the same key.
    public func save(_ db: Database) throws {
        let columns = try RowEncoder.columns(of: self)
        let sql = db.recordSQL(Self.self, .save, columns) {
            let updates = columns.filter { !Self.primaryKey.contains($0.name) }.map { "\($0.name) = excluded.\($0.name)" }
            return "INSERT INTO \(Self.tableName) (\(columns.map(\.name).joined(separator: ", "))) "
                + "VALUES (\(columns.map { _ in "?" }.joined(separator: ", "))) "
                + "ON CONFLICT (\(Self.primaryKey.joined(separator: ", "))) "
                + (updates.isEmpty ? "DO NOTHING" : "DO UPDATE SET \(updates.joined(separator: ", "))")
        }
        try db.execute(sql: sql, arguments: columns.map(\.value))
    }

    /// Updates the row with the record's key; false when there is none.
    @discardableResult
    public func update(_ db: Database) throws -> Bool {
        let columns = try RowEncoder.columns(of: self)
        let key = columns.filter { Self.primaryKey.contains($0.name) }
        let others = columns.filter { !Self.primaryKey.contains($0.name) }
        try db.execute(
            sql: "UPDATE \(Self.tableName) SET \(others.map { "\($0.name) = ?" }.joined(separator: ", ")) "
                + "WHERE \(key.map { "\($0.name) = ?" }.joined(separator: " AND "))",
            arguments: others.map(\.value) + key.map(\.value))
        return db.changesCount > 0
    }

    /// Deletes the row whose single-column key is `key`; false when there was none.
    @discardableResult
    public static func deleteOne(_ db: Database, key: some DatabaseValueConvertible) throws -> Bool {
        try db.execute(sql: "DELETE FROM \(tableName) WHERE \(primaryKey[0]) = ?", arguments: [key])
        return db.changesCount > 0
    }

    /// Deletes every row; returns how many.
    @discardableResult
    public static func deleteAll(_ db: Database) throws -> Int {
        try db.execute(sql: "DELETE FROM \(tableName)", arguments: [])
        return db.changesCount
    }

    // MARK: Reading

    /// The records of a whole query (`SELECT * FROM table …`).
    public static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [Self] {
        try db.records(Self.self, sql: sql, arguments: arguments)
    }

    /// Records of the table: `clause` follows `SELECT * FROM table` (`WHERE …`, `ORDER BY …`, `LIMIT …`).
    public static func fetchAll(_ db: Database, _ clause: String = "", arguments: StatementArguments = []) throws -> [Self] {
        try fetchAll(db, sql: "SELECT * FROM \(tableName) \(clause)", arguments: arguments)
    }

    public static func fetchOne(_ db: Database, _ clause: String = "", arguments: StatementArguments = []) throws -> Self? {
        try fetchAll(db, sql: "SELECT * FROM \(tableName) \(clause) LIMIT 1", arguments: arguments).first
    }

    /// The record whose single-column key is `key`.
    public static func fetchOne(_ db: Database, key: some DatabaseValueConvertible) throws -> Self? {
        try fetchOne(db, "WHERE \(primaryKey[0]) = ?", arguments: [key])
    }

    public static func fetchCount(_ db: Database) throws -> Int {
        try db.value(Int.self, sql: "SELECT COUNT(*) FROM \(tableName)") ?? 0
    }
}

extension Database {
    /// The rows of a query decoded as `Record` by column name (any Decodable, a table's record or a query's).
    public func records<Record: Decodable>(_ type: Record.Type, sql: String, arguments: StatementArguments = []) throws -> [Record] {
        try rows(sql: sql, arguments: arguments).map { try Record(from: RowDecoder(row: $0)) }
    }
}
