import CSQLite
import Synchronization

/// The writer's inserts into one table, announced after their commit (SQLite's update hook marks the transaction,
/// the end of the write announces it, a rollback forgets it): the database says when it changed, as GRDB's
/// observation does, instead of every writer telling the readers by hand.
final class InsertWatch: @unchecked Sendable {
    let table: String
    /// Set by the update hook on the writer's thread, read and cleared there (under the writer's lock).
    private var inserted = false
    private let actions = Mutex<[@Sendable () -> Void]>([])

    init(table: String) { self.table = table }

    func add(_ action: @escaping @Sendable () -> Void) { actions.withLock { $0.append(action) } }

    /// Installs the hooks on the writer (call under its lock). The watch outlives the connection: the pool holds both.
    func install(on db: Database) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_update_hook(db.handle, { context, operation, _, table, _ in
            guard let context, let table, operation == SQLITE_INSERT else { return }
            let watch = Unmanaged<InsertWatch>.fromOpaque(context).takeUnretainedValue()
            if String(cString: table) == watch.table { watch.inserted = true }
        }, context)
        sqlite3_rollback_hook(db.handle, { context in
            guard let context else { return }
            Unmanaged<InsertWatch>.fromOpaque(context).takeUnretainedValue().inserted = false
        }, context)
    }

    /// After a write, under the writer's lock: the actions to run once the lock is released, when a transaction that
    /// inserted into the table has ended with its commit (none while a transaction is still open).
    func takeCommitted(_ db: Database) -> [@Sendable () -> Void] {
        guard inserted, sqlite3_get_autocommit(db.handle) != 0 else { return [] }
        inserted = false
        return actions.withLock { $0 }
    }
}
