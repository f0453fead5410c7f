import SQLiteKit

/// The driver's tasks and stop order in the store. A driver action writes the task's new state and its
/// outbox item in one durable transaction, so neither exists without the other after a power cut.
public final class TaskBook: Sendable {
    public let store: Store

    public init(store: Store) { self.store = store }

    public func tasks() throws -> [TaskRecord] {
        try store.pool.read { db in try TaskRecord.fetchAll(db, "ORDER BY id") }
    }

    public func task(id: String) throws -> TaskRecord? {
        try store.pool.read { db in try TaskRecord.fetchOne(db, key: id) }
    }

    /// Stop ids in visiting order.
    public func sequence() throws -> [String] {
        try store.pool.read { db in try db.values(String.self, sql: "SELECT stop_id FROM route_stop ORDER BY position") }
    }

    /// A driver action: the task's new state and, when there is one, the item that tells the backend,
    /// committed durably. Without an item the change only mirrors what the backend already has (an ack, an
    /// accepted code), which a sync restores after a power cut: it is committed without waiting for the disk.
    /// An arrival opens its visit in the same transaction.
    ///
    /// `detailChanged`: false when the task's `detail` is what its row holds (a driver action, an answer): only the
    /// state columns are written.
    ///
    /// `syncLater`: the transaction is committed to the write-ahead log (it survives the process, a full disk fails
    /// it here) and the caller makes it durable with `Store.syncToDisk` before it tells anyone it is stored.
    @discardableResult
    public func commit(
        _ task: TaskRecord, detailChanged: Bool = true, item: OutboxItemRecord?, visit: VisitRecord? = nil,
        distance: TaskDistanceMark? = nil, syncLater: Bool = false
    ) throws -> OutboxItemRecord? {
        guard var item else {
            try store.pool.write { db in try task.write(detailChanged: detailChanged, db) }
            return nil
        }
        let write = { (db: Database) throws -> OutboxItemRecord in
            try task.write(detailChanged: detailChanged, db)
            item.id = try item.insertItem(db)
            try visit?.insert(db)
            try distance?.write(taskId: task.id, db)
            return item
        }
        return try store.queueing(durably: !syncLater, write)
    }

    /// A new stop order and, when it came from the driver, the item that tells the backend.
    public func setSequence(_ sequence: [String], item: OutboxItemRecord?) throws {
        try store.writeDurably { db in
            try Self.writeSequence(sequence, db)
            if let item { try item.insert(db) }
        }
    }

    /// What a sync with the backend decided, in one transaction: tasks written, tasks gone, the backend's
    /// stop order, and queued items the backend can no longer take made dead letters with a reason.
    public func applySync(
        upserts: [TaskRecord], removals: [String], sequence: [String]?, deadLetters: [Int64: String], now: Double
    ) throws {
        try store.writeDurably { db in
            for task in upserts { try task.save(db) }
            for id in removals { try TaskRecord.deleteOne(db, key: id) }
            if let sequence { try Self.writeSequence(sequence, db) }
            for (itemId, answer) in deadLetters { try OutboxItemRecord.deadLetter(itemId, answer: answer, now: now, in: db) }
        }
    }

    /// Logout: every task (names, phones, addresses) and the stop order go; the outbox stays. Returns how
    /// many tasks were removed. Their traces leave the files with `Store.erasePersonalTraces`.
    @discardableResult
    public func removeAll() throws -> Int {
        try store.writeDurably { db in
            try db.execute(sql: "DELETE FROM route_stop")
            // A refused item's answer may hold the backend's task, names and phones included.
            try db.execute(sql: "UPDATE outbox_item SET backend_answer = '(cleared at logout)' WHERE backend_answer IS NOT NULL")
            return try TaskRecord.deleteAll(db)
        }
    }

    private static func writeSequence(_ sequence: [String], _ db: Database) throws {
        try db.execute(sql: "DELETE FROM route_stop")
        for (position, stopId) in sequence.enumerated() {
            try db.execute(sql: "INSERT INTO route_stop(position, stop_id) VALUES (?, ?)", arguments: [position, stopId])
        }
    }
}
