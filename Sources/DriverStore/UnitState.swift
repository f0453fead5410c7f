import SQLiteKit

/// The row of `unit_state`: the unit's own small durable values, typed, in one row (`id` 1).
public struct UnitStateRecord: Sendable, Equatable, TableRecord {
    public static let tableName = "unit_state"

    var id = 1
    /// The newest ping ever put in a batch (acked batches are gone, so it is kept here).
    public var lastClaimedPing: Int64 = 0
    /// The single push cursor of releases before `push_cursor` (v14): read once, as the cursor of the driver
    /// logged in at the upgrade (`PushCursors`); no longer written.
    public var lastPushId = 0
    /// The driver whose queued items wait for their next login (set at logout); nil when none wait.
    public var outboxOwner: String?
    public var shiftOn = false
    public var shiftStartedAt: Double?
    public var shiftEndedAt: Double?

    enum CodingKeys: String, CodingKey {
        case id
        case lastClaimedPing = "last_claimed_ping", lastPushId = "last_push_id", outboxOwner = "outbox_owner"
        case shiftOn = "shift_on", shiftStartedAt = "shift_started_at", shiftEndedAt = "shift_ended_at"
    }

    public init() {}
}

/// The one owner of `unit_state`: read whole, changed in one transaction (a shift's three fields together).
public struct UnitState: Sendable {
    let store: Store

    public init(store: Store) { self.store = store }

    public func read() throws -> UnitStateRecord {
        try store.pool.read { db in try UnitStateRecord.fetchOne(db) ?? UnitStateRecord() }
    }

    /// Applies `change` to the stored row atomically and durably (a shift started, a driver logged out: told to
    /// the driver, so a power cut must not undo it); returns the new row. Rare: it waits for the disk.
    @discardableResult
    public func update(_ change: @Sendable (inout UnitStateRecord) -> Void) throws -> UnitStateRecord {
        try store.writeDurably { db in
            var record = try UnitStateRecord.fetchOne(db) ?? UnitStateRecord()
            change(&record)
            try record.save(db)
            return record
        }
    }
}
