import SQLiteKit

/// How much ping backlog the unit keeps while the backend is away. Transitions and proofs are never touched.
public struct RetentionPolicy: Sendable, Equatable {
    /// Pings whose fix is older than this, seconds of GPS time behind the newest ping, are dropped (default 7
    /// days). GPS time, not the system clock: a clock that steps by years drops nothing.
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
    /// as it is): first the age cap, in fix time behind the newest ping, then over the count cap the oldest
    /// backlog is thinned to one ping per minute of fix time, then the oldest are dropped.
    @discardableResult
    public func applyRetention(_ policy: RetentionPolicy) throws -> RetentionResult {
        if store.loggedPings > 0 { try store.foldPingLog() }
        return try store.pool.write { db in
            var result = RetentionResult()
            // Fix times grow with ids: the newest ping's, and the first id young enough (walked in id order, it stops at
            // the first young ping), bound what is too old without an index on fix times.
            if let newest = try db.value(Double.self, sql: "SELECT fix_time FROM ping ORDER BY id DESC LIMIT 1"),
               let young = try db.value(Int64.self, sql: "SELECT id FROM ping WHERE fix_time >= ? ORDER BY id LIMIT 1", arguments: [newest - policy.maxAge]) {
                try db.execute(sql: "DELETE FROM ping WHERE batch_id IS NULL AND id < ?", arguments: [young])
                result.dropped += db.changesCount
            }
            var excess = (try db.value(Int.self, sql: "SELECT COUNT(*) FROM ping") ?? 0) - policy.maxPings
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
