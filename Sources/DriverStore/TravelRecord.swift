import SQLiteKit
import FoundationEssentials

/// The row of `travel_state` (`id` 1): the odometer with the fix it last counted, the trip rules' state (JSON of
/// `TripDetector`), and the shift's starting reading and counts. Written with the pings' group commit, and at
/// once when a trip starts or ends.
public struct TravelRecord: Sendable, Equatable, TableRecord {
    public static let tableName = "travel_state"

    var id = 1
    public var metres = 0.0
    public var bridgedMetres = 0.0
    public var gaps = 0
    public var anchorTime: Double?
    public var anchorLat: Double?
    public var anchorLng: Double?
    public var anchorSpeed: Double?
    public var anchorError: Double?
    public var tripRules: Data?
    /// The shift these counts belong to (its start stamp).
    public var shiftStartedAt: Double?
    public var shiftStartMetres = 0.0
    public var shiftBridgedStartMetres = 0.0
    public var shiftTrips = 0
    public var shiftIdleSeconds = 0.0
    public var shiftHarshEvents = 0
    /// The vehicle's reading at the start of the trip in progress (JSON of `VehicleReading`).
    public var tripVehicleStart: Data?
    /// Trips whose vehicle and GNSS odometers disagreed by more than 5 %, ever.
    public var odometerDisagreements = 0

    enum CodingKeys: String, CodingKey {
        case id, metres, gaps
        case bridgedMetres = "bridged_metres", anchorTime = "anchor_time", anchorLat = "anchor_lat", anchorLng = "anchor_lng"
        case anchorSpeed = "anchor_speed", anchorError = "anchor_error", tripRules = "trip_rules"
        case shiftStartedAt = "shift_started_at", shiftStartMetres = "shift_start_metres", shiftBridgedStartMetres = "shift_bridged_start_metres"
        case shiftTrips = "shift_trips", shiftIdleSeconds = "shift_idle_seconds", shiftHarshEvents = "shift_harsh_events"
        case tripVehicleStart = "trip_vehicle_start", odometerDisagreements = "odometer_disagreements"
    }

    public init() {}

    /// Whether the distance and the shift's counts are those of `other` (the anchor and the trip rules' clock
    /// may differ: they move with every fix, the counts only with driving and events).
    func sameCounts(as other: TravelRecord) -> Bool {
        metres == other.metres && bridgedMetres == other.bridgedMetres && gaps == other.gaps && shiftStartedAt == other.shiftStartedAt
            && shiftStartMetres == other.shiftStartMetres && shiftBridgedStartMetres == other.shiftBridgedStartMetres
            && shiftTrips == other.shiftTrips && shiftIdleSeconds == other.shiftIdleSeconds && shiftHarshEvents == other.shiftHarshEvents
            && odometerDisagreements == other.odometerDisagreements && tripVehicleStart == other.tripVehicleStart
    }
}

/// A row of `trip`: a finished trip or idle period, kept for `driverctl trips` and sent once through the outbox.
public struct TripRecord: Sendable, Equatable, TableRecord {
    public static let tableName = "trip"

    public enum Kind: String, Codable, Sendable { case trip, idle }
    public enum State: String, Codable, Sendable { case queued, sent }

    /// Also the report's idempotency key.
    public var id: String
    public var kind: Kind
    public var startedAt: Double
    public var endedAt: Double
    public var metres: Double
    public var startLat: Double
    public var startLng: Double
    public var endLat: Double
    public var endLng: Double
    public var state: State
    /// The vehicle's own odometer distance of a trip (nil: no adapter, or the car reports none).
    public var vehicleMetres: Double?

    enum CodingKeys: String, CodingKey {
        case id, kind, metres, state
        case vehicleMetres = "vehicle_metres"
        case startedAt = "started_at", endedAt = "ended_at", startLat = "start_lat", startLng = "start_lng"
        case endLat = "end_lat", endLng = "end_lng"
    }

    public init(
        id: String, kind: Kind, startedAt: Double, endedAt: Double, metres: Double, startLat: Double, startLng: Double, endLat: Double,
        endLng: Double, vehicleMetres: Double? = nil
    ) {
        self.vehicleMetres = vehicleMetres
        self.id = id
        self.kind = kind
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.metres = metres
        self.startLat = startLat
        self.startLng = startLng
        self.endLat = endLat
        self.endLng = endLng
        state = .queued
    }
}

/// The one owner of `travel_state`, `trip` and `task_distance` (and the queueing of travel's reports).
public final class TravelBook: Sendable {
    public let store: Store
    /// Trips and idle periods the backend has are kept this long for `driverctl trips`.
    public static let keepSent: Double = 7 * 86_400

    public init(store: Store) { self.store = store }

    public func read() throws -> TravelRecord {
        try store.pool.read { db in try TravelRecord.fetchOne(db) ?? TravelRecord() }
    }

    /// At once (a trip that started, a shift that started): durable.
    public func save(_ state: TravelRecord) throws {
        try store.writeDurably { db in try state.save(db) }
    }

    /// A finished trip or idle period, its report queued and the state that follows, in one durable transaction.
    public func finish(_ trip: TripRecord, report: OutboxItemRecord, state: TravelRecord) throws {
        try store.writeDurably { db in
            try trip.insert(db)
            try report.insert(db)
            try state.save(db)
            try db.execute(
                sql: "DELETE FROM trip WHERE state = ? AND ended_at < ?",
                arguments: [TripRecord.State.sent.rawValue, trip.endedAt - Self.keepSent])
        }
    }

    /// A report with no row of its own (a harsh driving event) queued with the state that counts it, durably.
    public func queue(_ report: OutboxItemRecord, state: TravelRecord) throws {
        try store.writeDurably { db in
            try report.insert(db)
            try state.save(db)
        }
    }

    public func markSent(id: String) throws {
        try store.pool.write { db in
            try db.execute(sql: "UPDATE trip SET state = ? WHERE id = ?", arguments: [TripRecord.State.sent.rawValue, id])
        }
    }

    /// The newest first.
    public func recent(limit: Int) throws -> [TripRecord] {
        try store.pool.read { db in try TripRecord.fetchAll(db, "ORDER BY started_at DESC LIMIT ?", arguments: [limit]) }
    }

    /// Each task's readings: start, and end once it ended.
    public func taskReadings() throws -> [String: TaskReading] {
        try store.pool.read { db in
            var readings: [String: TaskReading] = [:]
            for row in try db.rows(sql: "SELECT task_id, start_metres, end_metres, start_vehicle_km, end_vehicle_km FROM task_distance") {
                guard let taskId: String = row.value("task_id"), let start: Double = row.value("start_metres") else { continue }
                readings[taskId] = TaskReading(
                    start: start, end: row.value("end_metres"), vehicleStartKm: row.value("start_vehicle_km"), vehicleEndKm: row.value("end_vehicle_km"))
            }
            return readings
        }
    }
}

/// A task's odometer readings: the GNSS odometer's (metres) and the vehicle's own (km, when an adapter reads one),
/// at its acceptance and at its end.
public struct TaskReading: Sendable, Equatable {
    public var start: Double
    public var end: Double?
    public var vehicleStartKm: Double?
    public var vehicleEndKm: Double?

    public init(start: Double, end: Double? = nil, vehicleStartKm: Double? = nil, vehicleEndKm: Double? = nil) {
        self.start = start
        self.end = end
        self.vehicleStartKm = vehicleStartKm
        self.vehicleEndKm = vehicleEndKm
    }
}

/// A task's odometer reading at its acceptance (kept if already there) or at its end (delivered, returned):
/// written in the transition's own transaction (`TaskBook.commit`), so a crash keeps both or neither.
public enum TaskDistanceMark: Sendable, Equatable {
    case started(metres: Double, vehicleKm: Double? = nil)
    case ended(metres: Double, vehicleKm: Double? = nil)

    func write(taskId: String, _ db: Database) throws {
        switch self {
        case .started(let metres, let km):
            try db.execute(
                sql: "INSERT OR IGNORE INTO task_distance (task_id, start_metres, start_vehicle_km) VALUES (?, ?, ?)", arguments: [taskId, metres, km])
        case .ended(let metres, let km):
            try db.execute(
                sql: "UPDATE task_distance SET end_metres = ?, end_vehicle_km = ? WHERE task_id = ? AND end_metres IS NULL",
                arguments: [metres, km, taskId])
        }
    }
}
