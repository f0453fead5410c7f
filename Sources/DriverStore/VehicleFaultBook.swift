import DriverAPI
import DriverDomain
import SQLiteKit

/// A row of `vehicle_fault`: a code the backend was told of.
public struct VehicleFaultRecord: Sendable, Equatable, TableRecord {
    public static let tableName = "vehicle_fault"
    public static var primaryKey: [String] { ["code", "pending"] }
    public var code: String
    public var pending: Bool
}

/// The owner of `vehicle_fault`: the codes the backend was told of. A change is queued for the backend and
/// recorded here in one durable transaction, so a code is reported once, through restarts and power cuts.
public struct VehicleFaultBook: Sendable {
    let store: Store

    public init(store: Store) { self.store = store }

    public func reported() throws -> Set<VehicleFault> {
        try store.pool.read { db in
            Set(try VehicleFaultRecord.fetchAll(db).map { VehicleFault(code: $0.code, pending: $0.pending) })
        }
    }

    /// Queues `items` (one per change) and moves the reported set by `changes`, durably.
    public func report(_ changes: FaultChanges, items: [OutboxItemRecord]) throws {
        try store.writeDurably { db in
            for item in items { try item.insert(db) }
            for fault in changes.cleared {
                try db.execute(sql: "DELETE FROM vehicle_fault WHERE code = ? AND pending = ?", arguments: [fault.code, fault.pending ? 1 : 0])
            }
            for fault in changes.appeared { try VehicleFaultRecord(code: fault.code, pending: fault.pending).insertIfAbsent(db) }
        }
    }

    /// Queues one item (the battery report) durably.
    public func queue(_ item: OutboxItemRecord) throws {
        _ = try store.writeDurably { db in try item.insert(db) }
    }
}
