/// Schema migrations: named steps of frozen SQL, each applied once, in order, in its own transaction.
///
/// Applied names are kept in `grdb_migrations`, the table GRDB's migrator kept before this module replaced it,
/// so a unit's database of an earlier release is upgraded in place, never recreated.
public struct Migrator: Sendable {
    private var migrations: [(name: String, apply: @Sendable (Database) throws -> Void)] = []

    public init() {}

    public mutating func registerMigration(_ name: String, _ apply: @escaping @Sendable (Database) throws -> Void) {
        precondition(!migrations.contains { $0.name == name }, "migration \(name) registered twice")
        migrations.append((name, apply))
    }

    /// Applies every pending migration, or those up to and including `last` (to build an older schema in a test).
    public func migrate(_ pool: DatabasePool, upTo last: String? = nil) throws {
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            let applied = Set(try appliedMigrations(db))
            // A database from a newer release (a downgrade) keeps its schema: its extra steps are left alone.
            let count = last.flatMap { last in migrations.firstIndex { $0.name == last }.map { $0 + 1 } } ?? migrations.count
            for migration in migrations.prefix(count) where !applied.contains(migration.name) {
                try db.inTransaction {
                    try migration.apply(db)
                    try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [migration.name])
                }
            }
        }
    }

    /// Names applied to this database, in the order they were registered (unknown ones last).
    public func appliedMigrations(_ db: Database) throws -> [String] {
        guard try db.value(Int.self, sql: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'grdb_migrations'") == 1 else {
            return []
        }
        let applied = try db.values(String.self, sql: "SELECT identifier FROM grdb_migrations", arguments: [])
        let known = migrations.map(\.name).filter(applied.contains)
        return known + applied.filter { !known.contains($0) }
    }
}
