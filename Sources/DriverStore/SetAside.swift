import SQLiteKit

/// Stored state a reader could not read (a row that does not decode, a blob of an older or damaged form): copied
/// aside whole (`set_aside_row`) and removed from its table in one durable transaction, so the daemon goes on from a
/// fresh default without ever writing over what was there. `driverctl diag` shows what was set aside.
public struct SetAsideRow: Sendable, Equatable {
    public var tableName: String
    /// Each column as an SQL literal (`quote()`): `{"metres":"1234.5","trip_rules":"X'7B22…'"}`.
    public var rowText: String
    public var reason: String
    public var setAsideAt: Double
}

extension Store {
    /// Tables whose rows may be set aside (their names go into SQL).
    public enum SetAsideTable: String, Sendable, CaseIterable {
        case travelState = "travel_state"
    }

    /// Copies every row of `table` aside with `reason`, then empties it. Returns how many rows were set aside.
    @discardableResult
    public func setAside(_ table: SetAsideTable, reason: String, now: Double) throws -> Int {
        try writeDurably { db in
            let columns = try db.values(String.self, sql: "SELECT name FROM pragma_table_info(?)", arguments: [table.rawValue])
            guard !columns.isEmpty else { return 0 }
            let object = columns.map { "'\($0)', quote(\"\($0)\")" }.joined(separator: ", ")
            try db.execute(
                sql: """
                    INSERT INTO set_aside_row (table_name, row_text, reason, set_aside_at)
                    SELECT ?, json_object(\(object)), ?, ? FROM \(table.rawValue)
                    """,
                arguments: [table.rawValue, reason, now])
            let count = db.changesCount
            try db.execute(sql: "DELETE FROM \(table.rawValue)")
            return count
        }
    }

    /// The rows set aside, newest first.
    public func setAsideRows(limit: Int = 20) throws -> (count: Int, newest: [SetAsideRow]) {
        try pool.read { db in
            let count = try db.value(Int.self, sql: "SELECT COUNT(*) FROM set_aside_row") ?? 0
            let rows = try db.rows(
                sql: "SELECT table_name, row_text, reason, set_aside_at FROM set_aside_row ORDER BY id DESC LIMIT ?", arguments: [limit])
            return (count, rows.map { row in
                SetAsideRow(
                    tableName: row.value("table_name") ?? "", rowText: row.value("row_text") ?? "", reason: row.value("reason") ?? "",
                    setAsideAt: row.value("set_aside_at") ?? 0)
            })
        }
    }
}
