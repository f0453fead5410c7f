import GRDB

/// How much ping backlog the unit keeps while the backend is away. Transitions and proofs are never touched.
public struct RetentionPolicy: Sendable, Equatable {
    /// Pings recorded longer ago than this are dropped, seconds (default 7 days).
    public var maxAge: Double
    /// Past this many pings the oldest backlog is thinned to one per minute, then dropped (default 1,000,000).
    public var maxPings: Int

    public init(maxAge: Double = 7 * 86400, maxPings: Int = 1_000_000) {
        self.maxAge = maxAge
        self.maxPings = maxPings
    }
}

public struct RetentionResult: Sendable, Equatable {
    public var thinned = 0
    public var dropped = 0
    public var isEmpty: Bool { thinned == 0 && dropped == 0 }
}

extension Outbox {
    /// Applies the caps to pings not yet in a batch (a claimed batch may already be at the backend and is sent
    /// as it is): first the age cap, then over the count cap the oldest backlog is thinned to one ping per
    /// minute of fix time, then the oldest are dropped.
    @discardableResult
    public func applyRetention(_ policy: RetentionPolicy, now: Double) throws -> RetentionResult {
        try store.pool.write { db in
            var result = RetentionResult()
            try db.execute(sql: "DELETE FROM ping WHERE batch_id IS NULL AND recorded_at < ?", arguments: [now - policy.maxAge])
            result.dropped += db.changesCount
            var excess = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ping")! - policy.maxPings
            guard excess > 0 else { return result }
            try db.execute(sql: """
                DELETE FROM ping WHERE id IN (
                    SELECT id FROM ping WHERE batch_id IS NULL AND id NOT IN (
                        SELECT MIN(id) FROM ping WHERE batch_id IS NULL GROUP BY CAST(fix_time / 60 AS INTEGER)
                    ) ORDER BY id LIMIT ?
                )
                """, arguments: [excess])
            result.thinned = db.changesCount
            excess -= result.thinned
            guard excess > 0 else { return result }
            try db.execute(sql: "DELETE FROM ping WHERE id IN (SELECT id FROM ping WHERE batch_id IS NULL ORDER BY id LIMIT ?)", arguments: [excess])
            result.dropped += db.changesCount
            return result
        }
    }
}
