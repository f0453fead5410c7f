import DriverAPI
import DriverDomain
import SQLiteKit
import FoundationEssentials

/// A row of `outbox_item`: a status transition or proof of delivery waiting for the backend, sent in order
/// per task under its idempotency key. Never dropped: it leaves the queue acked (deleted) or refused (kept
/// as `dead` with the backend's answer).
public struct OutboxItemRecord: Sendable, Equatable, TableRecord {
    public static let tableName = "outbox_item"

    public enum Kind: String, Codable, Sendable, CaseIterable {
        case status, podOTP = "pod_otp", podPhoto = "pod_photo"
        /// The driver's stop order (`task_id` is `TaskRecord.routeLane`).
        case route
        /// A visit to a stop (geofence arrival to departure), in its task's lane after the task's transitions.
        case visit
        /// A finished trip and a finished idle period (`task_id` is `TaskRecord.activityLane`).
        case trip, idle
        /// Harsh braking or acceleration (`task_id` is `TaskRecord.activityLane`).
        case harsh
        /// A driver's SOS (`task_id` is `TaskRecord.sosLane`): first in line, repeated until the backend acks it.
        case sos
        /// The unit's answer to a remote configuration document (`task_id` is `TaskRecord.configLane`).
        case configAck = "config_ack"
        /// The unit's answer to a release (`task_id` is `TaskRecord.updateLane`).
        case updateAck = "update_ack"
        /// The unit's one answer to a fleet request (`task_id` is `TaskRecord.fleetLane`).
        case fleetAck = "fleet_ack"
        /// A chunk of a requested diagnostic bundle (`task_id` is `TaskRecord.diagnosticsLane`): low priority.
        case diagChunk = "diag_chunk"
        /// A vehicle fault code that appeared or cleared, or the vehicle's battery running low (`task_id` is
        /// `TaskRecord.vehicleLane`): maintenance wants it the same day, so it goes at once.
        case vehicle
        /// The unit's health report (`task_id` is `TaskRecord.healthLane`): with the next batch; a newer one replaces
        /// one not sent yet.
        case health

        /// What the item counts as in the queue. Every kind says, here and in every switch over kinds, so a new
        /// kind cannot be counted, refused or merged as another by default.
        public var category: Category {
            switch self {
            case .status: .transition
            case .podOTP, .podPhoto: .proof
            case .route: .routeChange
            case .visit, .trip, .idle, .harsh, .configAck, .updateAck, .fleetAck, .diagChunk, .vehicle, .health: .activity
            case .sos: .alert
            }
        }

        /// When it goes: an SOS before anything else, transitions, proofs, route changes and arrivals at once
        /// (between ping batches if a backlog drains), records of how the vehicle went with the next batch.
        public var priority: Priority {
            switch self {
            case .sos: .urgent
            case .status, .podOTP, .podPhoto, .route, .visit, .configAck, .updateAck, .fleetAck, .vehicle: .normal
            case .trip, .idle, .harsh, .diagChunk, .health: .low
            }
        }
    }

    public enum Priority: Int, Sendable, Comparable, CaseIterable {
        case urgent, normal, low

        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// What the item counts as (the outcome policy in DriverDomain decides by it).
    public typealias Category = OutboxCategory

    public enum State: String, Codable, Sendable {
        case pending, dead
    }

    public var id: Int64?
    public var kind: Kind
    public var taskId: String
    public var idempotencyKey: String
    /// The request body as sent (JSON).
    public var payload: Data
    public var state: State
    public var attempts: Int
    public var lastError: String?
    /// For a dead item: what the backend answered.
    public var backendAnswer: String?
    public var createdAt: Double
    public var finishedAt: Double?

    enum CodingKeys: String, CodingKey {
        case id, kind, payload, state, attempts
        case taskId = "task_id", idempotencyKey = "idempotency_key", lastError = "last_error"
        case backendAnswer = "backend_answer", createdAt = "created_at", finishedAt = "finished_at"
    }

    public init(kind: Kind, taskId: String, idempotencyKey: String, payload: Data, createdAt: Double) {
        self.kind = kind
        self.taskId = taskId
        self.idempotencyKey = idempotencyKey
        self.payload = payload
        state = .pending
        attempts = 0
        self.createdAt = createdAt
    }

    /// Inserts the item and returns the id the database gave it: its columns named here, not found through
    /// `Encodable` (every driver action inserts one; 14,000 instructions less).
    /// `OutboxTests.insertedColumns` holds it to what `TableRecord.insert` writes.
    func insertItem(_ db: Database) throws -> Int64 {
        try db.execute(
            sql: "INSERT INTO outbox_item (id, kind, task_id, idempotency_key, payload, state, attempts, last_error, backend_answer, "
                + "created_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            arguments: [id, kind.rawValue, taskId, idempotencyKey, payload, state.rawValue, attempts, lastError, backendAnswer, createdAt, finishedAt])
        return db.lastInsertedRowID
    }

    /// The status a queued transition moves its task to (nil for other kinds, or an unreadable body): read
    /// here once, not wherever an answer comes back.
    public var transitionStatus: TaskStatus? {
        guard kind.category == .transition else { return nil }
        // Expected only for a body of another release's shape: the answer then just does not name a status.
        return (try? Codec.decode(TransitionBody.self, from: payload))?.status
    }

    /// The part of a transition's body this module needs (the contract's type lives above the store).
    private struct TransitionBody: Decodable { var status: TaskStatus }

    /// Makes a pending item a dead letter with the backend's answer (or the reason it can no longer be sent),
    /// in the caller's transaction. The one place this is written.
    static func deadLetter(_ itemId: Int64, answer: String, now: Double, in db: Database) throws {
        try db.execute(
            sql: "UPDATE outbox_item SET state = ?, backend_answer = ?, finished_at = ? WHERE id = ? AND state = ?",
            arguments: [State.dead.rawValue, answer, now, itemId, State.pending.rawValue])
    }
}
