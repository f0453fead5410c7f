import SQLiteKit
import Synchronization

/// The daemon's SQLite database, opened once (a WAL `DatabasePool`: one writer, two readers), migrated with frozen SQL.
public final class Store: Sendable {
    /// The one writer, private to this module: every table has its owner here (`PingRecorder` and `Outbox` for
    /// pings, `Outbox` and `TaskBook` for queued items, `TaskBook` for tasks, `PushBox` for pushes, `UnitState`
    /// for the unit's own values), and nothing outside writes SQL.
    let pool: DatabasePool
    public let path: String
    /// The outbox's only pending item, as the commit that queued it left the database (`queueing`), for the uplink's
    /// next look at the queue (`Outbox.headItems`): a driver's action goes to the backend without being read back.
    let soleItem = Mutex<SoleItem?>(nil)

    struct SoleItem {
        let item: OutboxItemRecord
        /// The database as the commit left it: nothing written since, by this connection or any other.
        let changes: Int
        let dataVersion: Int
    }

    /// Opens (creating when absent) `driverd.sqlite` in `directory` and applies pending migrations.
    /// An older database is upgraded in place; nothing is ever erased on a schema change.
    public init(directory: String) throws {
        path = directory + "/driverd.sqlite"
        var configuration = DatabasePool.Configuration()
        // Another process may hold the write lock for a moment (a maintenance tool, a test, a daemon still
        // stopping): wait for it rather than fail the write.
        configuration.busyTimeoutMilliseconds = 5000
        // The unit's working set is small (a few hundred unsent pings, a route's tasks): 512 KiB of page cache
        // per connection instead of SQLite's 2 MB, three connections.
        configuration.cacheKiB = 512
        configuration.readers = 2
        configuration.prepare = { db in
            // Pings tolerate NORMAL: in WAL mode a crash of the process loses nothing committed; transitions
            // and proof of delivery raise it to FULL for their own transactions.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // Deleted rows are overwritten, not left in free pages: a logout must really remove customers'
            // names and phones, and acked pings are locations.
            try db.execute(sql: "PRAGMA secure_delete = ON")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        try Migrations.migrator.migrate(pool)
    }

    /// Runs `body` in one transaction committed with `synchronous = FULL`: once this returns, a power cut
    /// cannot lose it. For what a driver did (transitions, proofs of delivery), never for pings.
    public func writeDurably<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.writeWithoutTransaction { db in try Self.transaction(db, durably: true) { try body(db) } }
    }

    /// A transaction on the writer, committed with `synchronous = FULL` when `durably`.
    private static func transaction<T>(_ db: Database, durably: Bool, _ body: () throws -> T) throws -> T {
        if durably { try db.execute(sql: "PRAGMA synchronous = FULL", arguments: []) }
        defer { if durably { try? db.execute(sql: "PRAGMA synchronous = NORMAL", arguments: []) } }
        return try db.inTransaction(body)
    }

    /// Commits `body`, which queues an item, at once or (`durably`) with `synchronous = FULL`. When the item is then
    /// the only pending one, it is remembered as the queue's head until the next look at the queue or the next write.
    func queueing(durably: Bool, _ body: (Database) throws -> OutboxItemRecord) throws -> OutboxItemRecord {
        try pool.writeWithoutTransaction { db in
            var alone = false
            let queued = try Self.transaction(db, durably: durably) { () throws -> OutboxItemRecord in
                let queued = try body(db)
                alone = try db.value(Int.self, sql: "SELECT COUNT(*) FROM outbox_item WHERE state = ?", arguments: [OutboxItemRecord.State.pending.rawValue]) == 1
                return queued
            }
            // Only once committed (a failed commit queued nothing), and under the writer's lock, as the uplink's look.
            // Nothing here may throw now: the item is stored, and the caller must hear so.
            let version = alone ? (try? Self.dataVersion(db)) : nil
            let sole = version.map { SoleItem(item: queued, changes: db.totalChangesCount, dataVersion: $0) }
            soleItem.withLock { $0 = sole }
            return queued
        }
    }

    /// The remembered head, once: valid while the database is as its commit left it. Call it on the writer.
    func takeSoleItem(_ db: Database) throws -> OutboxItemRecord? {
        guard let sole = soleItem.withLock({ sole in defer { sole = nil }; return sole }) else { return nil }
        guard sole.changes == db.totalChangesCount, sole.dataVersion == (try Self.dataVersion(db)) else { return nil }
        return sole.item
    }

    /// Changes when another connection (another process) commits to the database.
    private static func dataVersion(_ db: Database) throws -> Int {
        try db.value(Int.self, sql: "PRAGMA data_version", arguments: []) ?? 0
    }

    /// Makes every commit so far durable, as `writeDurably` does for its own: for a change committed with `write`
    /// whose durability may come a moment later (a transition goes to the backend while the disk syncs; its reply
    /// waits for this). Blocks for the disk: call it off the event loop.
    public func syncToDisk() throws { try pool.syncLog() }

    /// Folds the write-ahead log into the database and empties it, so deleted data is gone from both files.
    public func checkpoint() throws {
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    /// A failed write, said so an operator knows what to do: a full disk (or file-size limit) and an I/O error
    /// look alike to SQLite, and both keep everything already committed.
    public static func describeWriteFailure(_ error: any Error) -> String {
        guard let error = error as? SQLiteError, error.isWriteFailure else { return "\(error)" }
        return "cannot write the store (disk full, a file-size limit or a failing disk?); pending rows are kept and "
            + "retried: \(error.message)"
    }

    /// The SQLite library in use, e.g. "3.40.1".
    public func sqliteVersion() throws -> String {
        try pool.read { db in try db.value(String.self, sql: "SELECT sqlite_version()") ?? "unknown" }
    }

    /// Schema version names applied so far, oldest first.
    public func appliedMigrations() throws -> [String] {
        try pool.read { db in try Migrations.migrator.appliedMigrations(db) }
    }
}
