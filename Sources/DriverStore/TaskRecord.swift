import FoundationEssentials
import SQLiteKit

/// A row of `task`: one active (or just finished) task with its local, optimistic status and what the
/// backend last confirmed. `detail` is the backend's task as JSON (stops, names, phones, polyline): personal
/// data, kept only while the task is on the route.
public struct TaskRecord: Sendable, Equatable, TableRecord {
    public static let tableName = "task"
    /// The outbox lane of route changes (they are not a task's, and go in order among themselves).
    public static let routeLane = "~route"
    /// The outbox lane of trips and idle periods.
    public static let activityLane = "~activity"
    /// The outbox lane of a driver's SOS calls.
    public static let sosLane = "~sos"
    /// The outbox lane of answers to remote configuration documents.
    public static let configLane = "~config"
    /// The outbox lane of answers to releases.
    public static let updateLane = "~update"
    /// The outbox lane of answers to fleet requests, and the one of diagnostic bundles' chunks (in order).
    public static let fleetLane = "~fleet"
    public static let diagnosticsLane = "~diagnostics"
    /// The vehicle's fault codes and battery reports, in order.
    public static let vehicleLane = "~vehicle"
    /// The unit's health reports (a newer one replaces one not sent yet).
    public static let healthLane = "~health"

    public var id: String
    /// Wire names (`TaskStatus`, `SyncState`, `PODState`, `FailureReason` of the local API).
    public var status: String
    public var backendStatus: String
    public var syncState: String
    public var podType: String
    public var podState: String
    public var failureReason: String?
    public var detail: Data
    public var updatedAt: Double

    enum CodingKeys: String, CodingKey {
        case id, status, detail
        case backendStatus = "backend_status", syncState = "sync_state", podType = "pod_type", podState = "pod_state"
        case failureReason = "failure_reason", updatedAt = "updated_at"
    }

    public init(
        id: String, status: String, backendStatus: String, syncState: String, podType: String, podState: String,
        failureReason: String?, detail: Data, updatedAt: Double
    ) {
        self.id = id
        self.status = status
        self.backendStatus = backendStatus
        self.syncState = syncState
        self.podType = podType
        self.podState = podState
        self.failureReason = failureReason
        self.detail = detail
        self.updatedAt = updatedAt
    }
}

extension TaskRecord {
    /// Writes every column but `detail` (the backend's task as JSON, which only a sync changes): a driver action's
    /// write, without rewriting the task's kilobyte of JSON through an upsert. False when the row is not there.
    func updateState(_ db: Database) throws -> Bool {
        try db.execute(
            sql: "UPDATE task SET status = ?, backend_status = ?, sync_state = ?, pod_type = ?, pod_state = ?, failure_reason = ?, "
                + "updated_at = ? WHERE id = ?",
            arguments: [status, backendStatus, syncState, podType, podState, failureReason, updatedAt, id])
        return db.changesCount > 0
    }

    /// The row as a whole, or only its state when `detail` is what the row already holds.
    func write(detailChanged: Bool, _ db: Database) throws {
        if try detailChanged || !updateState(db) { try save(db) }
    }
}
