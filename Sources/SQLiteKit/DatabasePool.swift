#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A database file in WAL mode with one writer connection and a few reader connections: reads never wait for a
/// write, writes go one at a time. Opened once per process (one per file).
public final class DatabasePool: Sendable {
    public struct Configuration: Sendable {
        /// How many reads may run at once (each its own connection and page cache).
        public var readers = 2
        /// Each connection's page cache, KiB (SQLite's default is 2,000 KiB).
        public var cacheKiB = 512
        /// How long a write waits for another process's lock before it fails.
        public var busyTimeoutMilliseconds: Int32 = 5000
        /// Statements run on every new connection, the writer's first (pragmas).
        public var prepare: @Sendable (Database) throws -> Void = { _ in }

        public init() {}
    }

    public let path: String
    private let writer: Guarded
    private let readers: [Guarded]
    private let nextReader = Atomic<Int>(0)
    private let logSync: LogSync
    /// Tables whose inserts are announced after their commit (`afterCommit(insertingInto:)`): set up once, at open.
    private let watch: InsertWatch?
    /// Told the outcome of every write on the writer (`observeWrites`): the store's health hears each one.
    private let writeObserver = Mutex<(@Sendable ((any Error)?) -> Void)?>(nil)

    /// - Parameter watchedTable: a table whose inserts `afterCommit(insertingInto:)` announces.
    public init(path: String, configuration: Configuration = Configuration(), watchedTable: String? = nil) throws {
        self.path = path
        logSync = LogSync(databasePath: path)
        let writer = try Database(path: path, readOnly: false)
        try Self.setUp(writer, configuration)
        // WAL: readers see the last commit while a write is under way, and a commit appends instead of rewriting.
        let mode = try writer.value(String.self, sql: "PRAGMA journal_mode = WAL")
        guard mode?.lowercased() == "wal" else {
            throw SQLiteError(resultCode: 1, message: "cannot switch \(path) to WAL (journal mode \(mode ?? "unknown"))")
        }
        watch = watchedTable.map(InsertWatch.init(table:))
        if let watch { watch.install(on: writer) }
        self.writer = Guarded(writer)
        readers = try (0..<max(1, configuration.readers)).map { _ in
            let reader = try Database(path: path, readOnly: false)
            try Self.setUp(reader, configuration)
            try reader.execute(sql: "PRAGMA query_only = ON")
            return Guarded(reader)
        }
    }

    private static func setUp(_ db: Database, _ configuration: Configuration) throws {
        db.setBusyTimeout(milliseconds: configuration.busyTimeoutMilliseconds)
        try db.execute(sql: "PRAGMA cache_size = -\(configuration.cacheKiB)")
        try configuration.prepare(db)
    }

    /// Runs `body` in a transaction on the writer: committed when it returns, rolled back when it throws.
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try writeWithoutTransaction { db in try db.inTransaction { try body(db) } }
    }

    /// `action` runs after each commit of the writer that inserted rows into the table the pool watches, on the
    /// committing thread once the writer is released (keep it short: a wake-up). Not for a pool opened without one.
    public func afterCommit(insertingInto table: String, _ action: @escaping @Sendable () -> Void) {
        precondition(watch?.table == table, "the pool watches \(watch?.table ?? "no table"), not \(table)")
        watch?.add(action)
    }

    /// Runs `body` on the writer outside a transaction (pragmas, a checkpoint, transactions of its own; or a read of
    /// one statement right after the process's own commit: the writer's page cache holds what it wrote, where a
    /// reader reads every changed page again from the log).
    /// `announcing: false` keeps this write's inserts from `afterCommit`'s actions (its caller announces them later).
    public func writeWithoutTransaction<T>(announcing: Bool = true, _ body: (Database) throws -> T) throws -> T {
        var committed: [@Sendable () -> Void] = []
        // A write that throws after its commit (a statement after it) has still committed: announced either way.
        defer { if announcing { for action in committed { action() } } }
        let observer = writeObserver.withLock { $0 }
        var wrote = false
        do {
            let result = try writer.with { db in
                #if DEBUG
                db.injectedFailure = injectedFailure.withLock { $0 }
                #endif
                let changesBefore = db.totalChangesCount
                defer {
                    committed = watch?.takeCommitted(db) ?? []
                    wrote = db.totalChangesCount != changesBefore
                }
                return try body(db)
            }
            // A read on the writer's warm cache proves nothing about the disk: only a write that changed rows.
            if wrote { observer?(nil) }
            return result
        } catch {
            observer?(error)
            throw error
        }
    }

    #if DEBUG
    /// Tests' failing disk: every transaction on the writer that changes rows fails at its COMMIT as SQLite reports that
    /// errno (ENOSPC: `SQLITE_FULL`; EROFS, EIO: `SQLITE_IOERR_WRITE`) until set to nil; reads go on. Debug builds only.
    private let injectedFailure = Mutex<Int32?>(nil)
    public func injectWriteFailure(errno: Int32?) { injectedFailure.withLock { $0 = errno } }
    #endif

    /// `observer` hears the outcome of each write on the writer after it (nil: it succeeded and changed rows), on the writing thread,
    /// outside the writer: keep it short. One observer (a later call replaces it).
    public func observeWrites(_ observer: @escaping @Sendable ((any Error)?) -> Void) {
        writeObserver.withLock { $0 = observer }
    }

    /// Makes every transaction committed so far durable (an fdatasync of the write-ahead log, as a commit at
    /// `synchronous = FULL` does) without holding the writer: see `LogSync`.
    public func syncLog() throws(SQLiteError) { try logSync.sync() }

    /// Runs `body` on a reader, in one read transaction: every statement sees the same committed state.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        // A free reader if there is one, else wait in turn on the next.
        for reader in readers {
            if let result = try reader.withIfFree({ db in try db.inTransaction(immediate: false) { try body(db) } }) {
                return result
            }
        }
        let reader = readers[nextReader.add(1, ordering: .relaxed).oldValue % readers.count]
        return try reader.with { db in try db.inTransaction(immediate: false) { try body(db) } }
    }
}

/// A connection with the lock that gives it to one thread at a time.
private final class Guarded: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let db: Database

    init(_ db: Database) {
        self.db = db
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func with<T>(_ body: (Database) throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(db)
    }

    /// nil (without running `body`) when another thread holds the connection.
    func withIfFree<T>(_ body: (Database) throws -> T) rethrows -> T? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return .some(try body(db))
    }
}
