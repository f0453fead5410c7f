import SQLiteKit

/// Reads a stopped (or running: WAL allows it) daemon's database, read-only, as an operator's tool would.
func readStateDatabase<T>(_ stateDirectory: String, _ body: (Database) throws -> T) throws -> T {
    let db = try Database(path: stateDirectory + "/driverd.sqlite", readOnly: true)
    return try db.inTransaction(immediate: false) { try body(db) }
}
