/// What the daemon does when the vehicle arrives at a stop's geofence (config `arrival.mode`).
public enum ArrivalMode: String, Codable, Sendable, Equatable, CaseIterable {
    /// The daemon performs `task.arrive` itself, through the same durable path as a driver's action (the
    /// transition is marked `source: geofence`).
    case auto
    /// An `arrival.suggested` event, and the next-stop card says the arrival was detected.
    case suggest
    /// No geofence arrivals, departures or visits.
    case off
}

/// Why a delivery or a failure is completed farther from the stop than its geofence's exit border (wire names
/// of the backend contract).
public enum OutsideReason: String, Codable, Sendable, Equatable, CaseIterable {
    case customerMetElsewhere = "CUSTOMER_MET_ELSEWHERE"
    case addressWrong = "ADDRESS_WRONG"
    case gpsPoor = "GPS_POOR"
    case other = "OTHER"
}

/// Who made a transition: the driver, or the daemon on a geofence arrival.
public enum TransitionSource: String, Codable, Sendable, Equatable, CaseIterable {
    case driver, geofence
}

/// An arrival the geofence detected at a stop (on the next-stop card, and the `arrival.suggested` event).
public struct ArrivalDetected: Codable, Sendable, Equatable {
    public var taskId: String
    public var stopId: String
    /// Metres from the stop at the fix that decided it.
    public var distanceMeters: Double
    /// Seconds spent slow inside the geofence before it counted (0 when the vehicle stood inside).
    public var dwellSeconds: Double
    /// Unix seconds.
    public var detectedAt: Double
    /// `auto`: the daemon performed the arrival; `suggest`: the driver is asked to.
    public var mode: ArrivalMode
    public init(taskId: String, stopId: String, distanceMeters: Double, dwellSeconds: Double, detectedAt: Double, mode: ArrivalMode) {
        self.taskId = taskId
        self.stopId = stopId
        self.distanceMeters = distanceMeters
        self.dwellSeconds = dwellSeconds
        self.detectedAt = detectedAt
        self.mode = mode
    }
}

/// A visit to a stop: from the arrival (detected or tapped) to leaving through the exit border after the
/// stop's action. Sent to the backend once, through the outbox.
public struct VisitView: Codable, Sendable, Equatable {
    /// Also the idempotency key the backend receives it under.
    public var id: String
    public var taskId: String
    public var stopId: String
    public var arrivedAt: Double
    /// `geofence` when the arrival was detected (even if the driver tapped later), else `driver`.
    public var arrivalSource: TransitionSource
    /// Metres from the stop at the arrival; nil without a fix.
    public var arrivalDistanceMeters: Double?
    /// nil while the visit is open.
    public var departedAt: Double?
    public var dwellSeconds: Double?
    /// The vehicle left once before the stop's action was done.
    public var leftUnfinished: Bool
    /// `open`, `queued` (closed, waiting for the backend) or `sent`.
    public var state: String
    public init(
        id: String, taskId: String, stopId: String, arrivedAt: Double, arrivalSource: TransitionSource, arrivalDistanceMeters: Double?,
        departedAt: Double?, dwellSeconds: Double?, leftUnfinished: Bool, state: String
    ) {
        self.id = id
        self.taskId = taskId
        self.stopId = stopId
        self.arrivedAt = arrivedAt
        self.arrivalSource = arrivalSource
        self.arrivalDistanceMeters = arrivalDistanceMeters
        self.departedAt = departedAt
        self.dwellSeconds = dwellSeconds
        self.leftUnfinished = leftUnfinished
        self.state = state
    }
}

/// Result of `visits.list`: the latest visits, newest first.
public struct VisitList: Codable, Sendable, Equatable {
    public var visits: [VisitView]
    public init(visits: [VisitView]) { self.visits = visits }
}

// MARK: Methods

extension Methods {
    /// The latest visits to stops (geofence arrivals and departures), newest first.
    ///
    /// driverctl: `driverctl visits`.
    ///
    /// Params: none. Result: `{"visits": [{"id": "…", "taskId": "task-1001", "stopId": "task-1001-pickup",
    /// "arrivedAt": 1795852800, "arrivalSource": "geofence", "arrivalDistanceMeters": 12, "departedAt": 1795852890,
    /// "dwellSeconds": 90, "leftUnfinished": false, "state": "sent"}]}`, the newest 50 first. A visit runs from the
    /// arrival (detected by the geofence, or the driver's tap) to leaving through the exit border after the stop's
    /// action; it then goes to the backend once (`POST /api/v1/rider/visits`, the visit's id as idempotency key).
    /// `state`: `open`, `queued` or `sent`. Leaving a destination before delivering raises `stop.leftUnfinished`.
    public static let visitsList = Method<NoParams, VisitList>("visits.list", mutating: false)

    /// This file's methods, in `Methods.all`.
    static let visits: [MethodDescriptor] = [visitsList.descriptor]
}
