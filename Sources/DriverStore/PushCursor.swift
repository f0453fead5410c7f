import SQLiteKit

/// A row of `push_cursor`: the newest push id a driver's pushes reached on this unit. The backend numbers each
/// driver's pushes on their own (1, 2, 3 …), so a unit that two drivers share keeps one cursor each.
public struct PushCursorRecord: Sendable, Equatable, TableRecord {
    public static let tableName = "push_cursor"
    public static var primaryKey: [String] { ["driver_id"] }
    public var driverId: String
    public var lastPushId: Int

    enum CodingKeys: String, CodingKey {
        case driverId = "driver_id", lastPushId = "last_push_id"
    }
}

/// The owner of `push_cursor`.
public struct PushCursors: Sendable {
    let store: Store

    public init(store: Store) { self.store = store }

    /// Where `driver`'s pushes continue: their cursor, or for the first driver after an upgrade the unit's single
    /// cursor of older releases (`unit_state.last_push_id`, kept for whoever was logged in then), else 0.
    public func lastId(driver: String) throws -> Int {
        try store.pool.read { db in
            if let row = try PushCursorRecord.fetchOne(db, key: driver) { return row.lastPushId }
            guard try PushCursorRecord.fetchCount(db) == 0 else { return 0 }
            return try UnitStateRecord.fetchOne(db)?.lastPushId ?? 0
        }
    }

    /// `driver`'s pushes reached `id`: kept durably (a power cut must not bring back a push already handed on).
    public func advance(driver: String, to id: Int) throws {
        try store.writeDurably { db in
            try db.execute(
                sql: """
                    INSERT INTO push_cursor (driver_id, last_push_id) VALUES (?, ?)
                    ON CONFLICT (driver_id) DO UPDATE SET last_push_id = max(last_push_id, excluded.last_push_id)
                    """,
                arguments: [driver, id])
        }
    }
}
