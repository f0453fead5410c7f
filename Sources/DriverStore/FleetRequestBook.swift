import SQLiteKit

/// The fleet's requests this unit took: each is answered once (its answer and any bundle chunks are queued in the
/// same durable transaction that records it).
public final class FleetRequestBook: Sendable {
    public let store: Store

    public init(store: Store) { self.store = store }

    public func isKnown(_ requestId: String) throws -> Bool {
        try store.pool.read { db in
            try db.value(Bool.self, sql: "SELECT EXISTS (SELECT 1 FROM fleet_request WHERE request_id = ?)", arguments: [requestId]) ?? false
        }
    }

    /// Records the request with what it queues. False (and nothing queued) when it was taken before.
    @discardableResult
    public func take(requestId: String, kind: String, at now: Double, items: [OutboxItemRecord]) throws -> Bool {
        try store.writeDurably { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO fleet_request (request_id, kind, received_at) VALUES (?, ?, ?)", arguments: [requestId, kind, now])
            guard db.changesCount == 1 else { return false }
            for item in items { try item.insert(db) }
            return true
        }
    }
}
