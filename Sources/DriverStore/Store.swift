import SQLiteKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's SQLite database, opened once (a WAL `DatabasePool`: one writer, two readers), migrated with frozen SQL.
public final class Store: Sendable {
    /// The one writer, private to this module: every table has its owner here (`PingRecorder` and `Outbox` for
    /// pings, `Outbox` and `TaskBook` for queued items, `TaskBook` for tasks, `PushBox` for pushes, `UnitState`
    /// for the unit's own values), and nothing outside writes SQL.
    let pool: DatabasePool
    public let path: String
    /// Items committed without waiting for the disk (`queueing(durably: false)`) whose sync has not finished: the
    /// sender must not see them yet. A backend that holds a change the unit then loses in a power cut would refuse
    /// the driver's repeat of it (a new key); sending only what is on disk keeps the two in step.
    private let awaitingSync = Mutex<[Int64]>([])
    /// Pings written before the backend took them (`PingLog`), and the next ping id. Held for an append (the
    /// recorder's group commit, on the GPS thread) and for a fold's rename, never while a fold waits for the database.
    let pingLog: Mutex<PingLog>
    /// One fold at a time (the uplink's before a batch, the recorder's, retention's, the one at start). Taken before
    /// `pingLog`, never inside a database write.
    private let folding = Mutex<Void>(())

    /// The state directory's health (full, read-only, failing), heard from every write; and the reserve for the
    /// driver's changes.
    public let health: StoreHealth

    /// Opens (creating when absent) `driverd.sqlite` in `directory` and applies pending migrations.
    /// An older database is upgraded in place; nothing is ever erased on a schema change. `reserveBytes` are kept back
    /// for the driver's changes (`StoreHealth`).
    public init(directory: String, reserveBytes: Int64 = 0) throws {
        path = directory + "/driverd.sqlite"
        let health = StoreHealth(directory: directory, reserveBytes: reserveBytes)
        self.health = health
        // Before the first write can fail: a full or read-only disk is known (and said) from the start.
        health.check()
        var configuration = DatabasePool.Configuration()
        // Another process may hold the write lock for a moment (a maintenance tool, a test, a daemon still
        // stopping): wait for it rather than fail the write.
        configuration.busyTimeoutMilliseconds = 5000
        // The unit's working set is small (a few hundred unsent pings, a route's tasks): 512 KiB of page cache
        // per connection instead of SQLite's 2 MB, three connections.
        configuration.cacheKiB = 512
        configuration.readers = 2
        configuration.prepare = { db in
            // NORMAL: a commit reaches the write-ahead log without waiting for the disk; what must survive a power
            // cut is synced by its writer (FULL for what a driver did, a log sync for the pings' group commit).
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // Deleted rows are zeroed in the pages a change writes anyway (no extra flash writes); the free pages
            // they leave are wiped at logout (`erasePersonalTraces`), where customers' names and phones must go.
            try db.execute(sql: "PRAGMA secure_delete = FAST")
            // A checkpoint leaves the log at most this long (it is reused from its start either way).
            try db.execute(sql: "PRAGMA journal_size_limit = \(Self.logSizeLimit)")
        }
        do {
            pool = try DatabasePool(path: path, configuration: configuration, watchedTable: OutboxItemRecord.tableName)
        } catch {
            health.noteFailure(error)
            throw error
        }
        pool.observeWrites { error in
            if let error { health.noteFailure(error) } else { health.noteWritten() }
        }
        try Migrations.migrator.migrate(pool)
        pingLog = Mutex(PingLog(directory: directory))
        // What the last run logged goes into the database before anyone reads it (the odometer's state among it);
        // new pings are numbered above every one there, folded or not.
        try foldPingLog()
        let newest = try pool.read { db in try Self.newestPingId(db) }
        pingLog.withLock { $0.folded(newest: newest) }
        // SQLite makes its log's name durable but not the database file's: a unit that loses power after its first
        // start would otherwise come back without the file (and every transition committed in it).
        try DurableFile.syncDirectory(directory)
        pool.afterCommit(insertingInto: OutboxItemRecord.tableName) { [weak self] in self?.announceQueued() }
        health.prepareReserve()
    }

    #if DEBUG
    private let injectedFailure = Mutex<Int32?>(nil)
    /// Tests' failing disk: the database's writes and the ping log's appends fail with `errno` until set to nil.
    public func injectWriteFailure(errno: Int32?) {
        injectedFailure.withLock { $0 = errno }
        pool.injectWriteFailure(errno: errno)
        health.inject(errno: errno)
    }
    #endif

    /// Items that must go though the disk would not take them (an SOS on a full card), under ids below zero: sent
    /// from memory like queued ones (`Outbox.headItems`), written once the disk allows (`Outbox.keepUnsaved`).
    let unsavedItems = Mutex<(items: [OutboxItemRecord], nextId: Int64)>(([], -1))

    /// Bytes of write-ahead log kept after a checkpoint.
    static let logSizeLimit = 1 << 20

    /// Runs `body` in one transaction committed with `synchronous = FULL`: once this returns, a power cut
    /// cannot lose it. For what a driver did (transitions, proofs of delivery), never for pings.
    /// `usingReserve: false` for what may wait or be held in memory (a health report): the reserve is the driver's.
    public func writeDurably<T>(usingReserve: Bool = true, _ body: (Database) throws -> T) throws -> T {
        try withoutActuallyEscaping(body) { body in
            let write = { try self.pool.writeWithoutTransaction { db in try Self.transaction(db, durably: true) { try body(db) } } }
            return usingReserve ? try self.usingReserve(write) : try write()
        }
    }

    /// Runs `write` again once with the reserve given up when it found the disk full: a driver's change is saved after
    /// another program filled the disk. Only for what must be kept (durable writes), never for pings.
    private func usingReserve<T>(_ write: () throws -> T) throws -> T {
        do {
            return try write()
        } catch {
            guard StoreHealth.condition(of: error) == .full, health.releaseReserve() else { throw error }
            return try write()
        }
    }

    /// A transaction on the writer, committed with `synchronous = FULL` when `durably`.
    private static func transaction<T>(_ db: Database, durably: Bool, _ body: () throws -> T) throws -> T {
        if durably { try db.execute(sql: "PRAGMA synchronous = FULL", arguments: []) }
        // Left at FULL if this fails: slower, never less safe (the outcome of the transaction is what is returned).
        defer { if durably { try? db.execute(sql: "PRAGMA synchronous = NORMAL", arguments: []) } }
        return try db.inTransaction(body)
    }

    /// Commits `body`, which queues an item, at once or (`durably`) with `synchronous = FULL`. An item committed at
    /// once is kept from the sender until `syncToDisk` has run, and announced then.
    func queueing(durably: Bool, _ body: (Database) throws -> OutboxItemRecord) throws -> OutboxItemRecord {
        let queued = try usingReserve {
            try pool.writeWithoutTransaction(announcing: durably) { db in try Self.transaction(db, durably: durably) { try body(db) } }
        }
        if !durably, let id = queued.id { awaitingSync.withLock { $0.append(id) } }
        return queued
    }

    /// `action` runs each time an outbox item can be sent: after the commit that queued it, or for one committed
    /// before the disk held it, after `syncToDisk`. On the committing thread: keep it short (the sender's wake-up).
    /// Every owner that queues an item is heard this way; none wakes the sender by hand.
    public func whenItemQueued(_ action: @escaping @Sendable () -> Void) { queuedActions.withLock { $0.append(action) } }

    private let queuedActions = Mutex<[@Sendable () -> Void]>([])

    /// An item held in memory can be sent: the sender hears it as it hears a queued one.
    func announceUnsaved() { announceQueued() }

    private func announceQueued() { for action in queuedActions.withLock({ $0 }) { action() } }

    // MARK: The ping log

    /// Appends pings (given ids here, above every one so far) and the odometer's state to the ping log, synced.
    func logPings(_ pings: [PingRecord], travel: TravelRecord?) throws {
        try pingLog.withLock { log in
            var entries: [PingLog.Entry] = []
            for var ping in pings {
                ping.id = log.nextId
                log.nextId += 1
                entries.append(.ping(ping))
            }
            if let travel { entries.append(.travel(travel)) }
            do {
                #if DEBUG
                if let errno = injectedFailure.withLock({ $0 }) { throw DurableFile.Failure(call: "write", path: log.path, errno: errno) }
                #endif
                try log.append(entries)
            } catch {
                health.noteFailure(error)
                throw error
            }
        }
        health.noteWritten()
    }

    /// Pings in the log, waiting to be folded into the database (with those of a fold under way: see `countingPings`).
    var loggedPings: Int { pingLog.withLock { $0.pings + $0.setAsidePings } }

    /// Moves what the log holds into the database (one durable transaction, pings by id so a fold repeated after a
    /// power cut adds nothing twice), then removes what was folded; and finds the next ping id.
    ///
    /// The log is set aside under its lock (a rename) and folded outside it: the fold waits for the database's one
    /// writer (a driver's transition, an ack) and, while it did so holding the lock, the reader's next group commit
    /// waited too, past its pings' window (a power-cut soak lost pings 8.7 to 10.2 s old to it).
    func foldPingLog() throws {
        try folding.withLock { _ in
            // One left by a fold that failed (or was cut off by a power cut) first: it is older than the log.
            try foldSetAside()
            guard try pingLog.withLock({ try $0.setAside() }) else { return }
            try foldSetAside()
        }
    }

    /// Folds the set-aside log, if any, and removes it. Under `folding`.
    private func foldSetAside() throws {
        let path = pingLog.withLock { $0.setAsidePath }
        guard try DurableFile.sizeIfPresent(path) != nil else { return }
        // Read without the lock: the file is the fold's alone, appends go to the new one.
        let entries = try PingLog.read(path)
        let pings = entries.compactMap { if case .ping(let ping) = $0 { ping } else { nil } }
        let travel = entries.compactMap { if case .travel(let travel) = $0 { travel } else { nil } }.last
        // Not from the reserve: pings wait while it is in use (the log keeps them).
        let newest = try pool.writeWithoutTransaction { db in try Self.transaction(db, durably: true) { () -> Int64 in
            for ping in pings { try ping.insertIfAbsent(db) }
            try travel?.save(db)
            return try Self.newestPingId(db)
        } }
        // Durably gone before any of its pings can be acked: a power cut must not bring them back to be sent again.
        try DurableFile.remove(path)
        pingLog.withLock { $0.folded(newest: newest) }
    }

    /// The highest ping id the database holds or ever put in a batch (acked batches are gone).
    private static func newestPingId(_ db: Database) throws -> Int64 {
        max(try db.value(Int64.self, sql: "SELECT MAX(id) FROM ping") ?? 0,
            try db.value(Int64.self, sql: "SELECT last_claimed_ping FROM unit_state") ?? 0)
    }

    /// Pings waiting in the log and in the table, counted between folds: a fold moving them from one to the other is
    /// either before or after, never halfway.
    func countingPings<T>(_ body: (_ logged: Int) throws -> T) throws -> T {
        try folding.withLock { _ in try body(loggedPings) }
    }

    /// Makes every commit so far durable, as `writeDurably` does for its own: for a change committed with `write`
    /// whose durability may come a moment later (a transition goes to the backend while the disk syncs; its reply
    /// waits for this). Blocks for the disk: call it off the event loop.
    public func syncToDisk() throws {
        // What was committed before this sync is durable after it; a commit that comes during the sync waits for the next.
        let committed = awaitingSync.withLock { $0 }
        try pool.syncLog()
        if !committed.isEmpty {
            awaitingSync.withLock { $0.removeAll { committed.contains($0) } }
            announceQueued()
        }
    }

    /// Whether an item was committed without waiting for the disk and is not synced yet (not to be sent).
    func isAwaitingSync(_ itemId: Int64?) -> Bool {
        guard let itemId else { return false }
        return awaitingSync.withLock { $0.contains(itemId) }
    }

    /// Folds the write-ahead log into the database and empties it.
    public func checkpoint() throws {
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    /// Rebuilds the database without its free pages, then empties the log: nothing deleted so far (customers' names,
    /// phones, messages) stays in either file. For logout: it rewrites the whole database once (a few hundred KB).
    public func erasePersonalTraces() throws {
        try pool.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") }
        try checkpoint()
    }

    /// A failed write in the store's words: the condition it shows (`storage full`, `storage read-only`, `storage
    /// failing`: `StoreHealth` decides) and the system's own text; any other failure as it is. Everything committed
    /// before it is kept; what failed is not retried by itself unless its owner says so.
    public static func describeWriteFailure(_ error: any Error) -> String {
        guard let condition = StoreHealth.condition(of: error) else { return "\(error)" }
        let message = switch error {
        case let error as SQLiteError where error.systemErrno != 0:
            "\(error.message) (\(String(cString: strerror(error.systemErrno))))"
        case let error as SQLiteError: error.message
        default: "\(error)"
        }
        return "storage \(condition.rawValue): \(message)"
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
