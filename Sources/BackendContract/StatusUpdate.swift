import DriverAPI
import DriverDomain

/// Where the vehicle was when something happened.
public struct Location: Codable, Sendable, Equatable {
    public var lat: Double
    public var lng: Double
    /// Horizontal accuracy, metres.
    public var accuracy: Double?
    public init(lat: Double, lng: Double, accuracy: Double? = nil) {
        self.lat = lat
        self.lng = lng
        self.accuracy = accuracy
    }
}

/// `PATCH /api/v1/rider/tasks/{taskId}/status`, sent with an `Idempotency-Key` header.
public struct StatusUpdateRequest: Codable, Sendable, Equatable {
    public var status: TaskStatus
    public var location: Location?
    /// Unix seconds of the driver's action (not of the upload).
    public var timestamp: Double
    /// Where `timestamp` came from: `ntp` (a synchronised system clock), `gps` (GPS time carried on the unit's
    /// monotonic clock while the system clock is not synchronised) or `unsynced` (neither: may be wrong).
    public var timeSource: TimeSource?
    /// Required with `DELIVERY_FAILED`.
    public var reason: FailureReason?
    public var note: String?
    /// `driver` (absent in older clients) or `geofence` (the unit detected the arrival and made it).
    public var source: TransitionSource?
    /// Metres from the transition's stop at the action (a delivery, failure or arrival with a fresh fix).
    public var stopDistance: Double?
    /// Why a delivery or failure was completed beyond the stop's geofence.
    public var outsideReason: OutsideReason?
    /// `unknown`: a delivery or failure without a fresh fix, so its distance from the stop was not checked.
    public var position: PositionCheck?

    public init(
        status: TaskStatus, location: Location?, timestamp: Double, timeSource: TimeSource? = nil, reason: FailureReason? = nil,
        note: String? = nil, source: TransitionSource? = nil, stopDistance: Double? = nil, outsideReason: OutsideReason? = nil,
        position: PositionCheck? = nil
    ) {
        self.status = status
        self.location = location
        self.timestamp = timestamp
        self.timeSource = timeSource
        self.reason = reason
        self.note = note
        self.source = source
        self.stopDistance = stopDistance
        self.outsideReason = outsideReason
        self.position = position
    }
}

/// The answer to an accepted status update (and to every replay of its idempotency key).
public struct StatusAccepted: Codable, Sendable, Equatable {
    public var taskId: String
    public var status: TaskStatus
    public var previousStatus: TaskStatus
    public var idempotencyKey: String
    /// Unix seconds when the backend applied it.
    public var acceptedAt: Double

    public init(taskId: String, status: TaskStatus, previousStatus: TaskStatus, idempotencyKey: String, acceptedAt: Double) {
        self.taskId = taskId
        self.status = status
        self.previousStatus = previousStatus
        self.idempotencyKey = idempotencyKey
        self.acceptedAt = acceptedAt
    }
}

/// Whether a completion's position was checked against its stop.
public enum PositionCheck: String, Codable, Sendable, Equatable {
    /// No fresh fix: the distance from the stop is not known.
    case unknown
}
