import SQLiteKit

/// A row of `visit`: one visit to a stop, from the arrival to leaving through the exit border after the stop's
/// action. The stop's place and geofence are kept with it, so a visit still closes after its task left the route.
public struct VisitRecord: Sendable, Equatable, TableRecord {
    public static let tableName = "visit"

    public enum State: String, Codable, Sendable {
        /// At the stop (or left it unfinished and may come back).
        case open
        /// Closed, its report in the outbox.
        case queued
        /// The backend has it.
        case sent
    }

    /// Also the report's idempotency key.
    public var id: String
    public var taskId: String
    public var stopId: String
    public var lat: Double
    public var lng: Double
    public var radius: Double
    public var arrivedAt: Double
    /// `driver` or `geofence` (the local API's `TransitionSource`).
    public var arrivalSource: String
    public var arrivalDistance: Double?
    public var timeSource: String?
    public var leftUnfinished: Bool
    public var departedAt: Double?
    public var dwellSeconds: Double?
    public var state: State

    enum CodingKeys: String, CodingKey {
        case id, lat, lng, radius, state
        case taskId = "task_id", stopId = "stop_id", arrivedAt = "arrived_at", arrivalSource = "arrival_source"
        case arrivalDistance = "arrival_distance", timeSource = "time_source", leftUnfinished = "left_unfinished"
        case departedAt = "departed_at", dwellSeconds = "dwell_seconds"
    }

    public init(
        id: String, taskId: String, stopId: String, lat: Double, lng: Double, radius: Double, arrivedAt: Double, arrivalSource: String,
        arrivalDistance: Double?, timeSource: String?
    ) {
        self.id = id
        self.taskId = taskId
        self.stopId = stopId
        self.lat = lat
        self.lng = lng
        self.radius = radius
        self.arrivedAt = arrivedAt
        self.arrivalSource = arrivalSource
        self.arrivalDistance = arrivalDistance
        self.timeSource = timeSource
        leftUnfinished = false
        state = .open
    }
}

/// Visits in the store. A visit opens in the transaction of the arrival that starts it (`TaskBook.commit`);
/// it closes in one durable transaction with the outbox item that reports it, so it is sent exactly once.
public final class VisitBook: Sendable {
    public let store: Store
    /// Sent visits are kept this long for `driverctl visits`, then deleted.
    public static let keepSent: Double = 7 * 86_400

    public init(store: Store) { self.store = store }

    public func open() throws -> [VisitRecord] {
        try store.pool.read { db in try VisitRecord.fetchAll(db, "WHERE state = ?", arguments: [VisitRecord.State.open.rawValue]) }
    }

    /// The newest first.
    public func recent(limit: Int) throws -> [VisitRecord] {
        try store.pool.read { db in try VisitRecord.fetchAll(db, "ORDER BY arrived_at DESC LIMIT ?", arguments: [limit]) }
    }

    /// Left with its action undone: the departure is kept (the visit stays open until the action is done).
    public func markLeftUnfinished(id: String, departedAt: Double) throws {
        try store.pool.write { db in
            try db.execute(sql: "UPDATE visit SET left_unfinished = 1, departed_at = ? WHERE id = ?", arguments: [departedAt, id])
        }
    }

    /// The visit ends and its report is queued, together.
    public func close(id: String, departedAt: Double, dwellSeconds: Double, report: OutboxItemRecord) throws {
        try store.writeDurably { db in
            try db.execute(
                sql: "UPDATE visit SET state = ?, departed_at = ?, dwell_seconds = ? WHERE id = ? AND state = ?",
                arguments: [VisitRecord.State.queued.rawValue, departedAt, dwellSeconds, id, VisitRecord.State.open.rawValue])
            guard db.changesCount == 1 else { return }
            try report.insert(db)
            try db.execute(
                sql: "DELETE FROM visit WHERE state = ? AND departed_at < ?",
                arguments: [VisitRecord.State.sent.rawValue, departedAt - Self.keepSent])
        }
    }

    /// The backend acked the visit's report.
    public func markSent(id: String) throws {
        try store.pool.write { db in
            try db.execute(sql: "UPDATE visit SET state = ? WHERE id = ?", arguments: [VisitRecord.State.sent.rawValue, id])
        }
    }
}
