import SQLiteKit

/// A row of `push`: a push from the backend that no front end has acknowledged yet (acknowledged ones are
/// deleted: a customer's message is personal data).
public struct PushRecord: Sendable, Equatable, TableRecord {
    public static let tableName = "push"

    public var id: Int64
    public var kind: String
    public var taskId: String?
    public var message: String?
    public var title: String
    public var interruptive: Bool
    /// Whether it has been sent to the front ends (held while the vehicle moves).
    public var delivered: Bool
    public var receivedAt: Double

    enum CodingKeys: String, CodingKey {
        case id, kind, message, title, interruptive, delivered
        case taskId = "task_id", receivedAt = "received_at"
    }

    public init(id: Int64, kind: String, taskId: String?, message: String?, title: String, interruptive: Bool, delivered: Bool, receivedAt: Double) {
        self.id = id
        self.kind = kind
        self.taskId = taskId
        self.message = message
        self.title = title
        self.interruptive = interruptive
        self.delivered = delivered
        self.receivedAt = receivedAt
    }
}

/// Unacknowledged pushes in the store, so a front end that connects later (or after a restart) gets them.
public final class PushBox: Sendable {
    public let store: Store

    public init(store: Store) { self.store = store }

    /// Keeps a push; one already kept (a replay after a reconnect) is ignored. Returns whether it was new.
    @discardableResult
    public func keep(_ push: PushRecord) throws -> Bool {
        try store.pool.write { db in
            guard try PushRecord.fetchOne(db, key: push.id) == nil else { return false }
            try push.insert(db)
            return true
        }
    }

    public func pending() throws -> [PushRecord] {
        try store.pool.read { db in try PushRecord.fetchAll(db, "ORDER BY id") }
    }

    public func push(id: Int64) throws -> PushRecord? {
        try store.pool.read { db in try PushRecord.fetchOne(db, key: id) }
    }

    public func markDelivered(_ ids: [Int64]) throws {
        guard !ids.isEmpty else { return }
        try store.pool.write { db in
            try db.execute(
                sql: "UPDATE push SET delivered = 1 WHERE id IN (\(ids.map { _ in "?" }.joined(separator: ",")))",
                arguments: ids)
        }
    }

    @discardableResult
    public func acknowledge(id: Int64) throws -> Bool {
        try store.pool.write { db in try PushRecord.deleteOne(db, key: id) }
    }

    @discardableResult
    public func removeAll() throws -> Int {
        try store.pool.write { db in try PushRecord.deleteAll(db) }
    }
}
