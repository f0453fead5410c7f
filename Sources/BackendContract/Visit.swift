import DriverAPI
import DriverDomain

/// `POST /api/v1/rider/visits`, sent with an `Idempotency-Key` header (the visit's id): one visit to a stop,
/// from the arrival to leaving through the geofence's exit border after the stop's action.
public struct VisitReport: Codable, Sendable, Equatable {
    public var visitId: String
    public var taskId: String
    public var stopId: String
    /// Unix seconds.
    public var arrivedAt: Double
    public var departedAt: Double
    public var dwellSeconds: Double
    /// Metres from the stop at the arrival; absent without a fix.
    public var arrivalDistance: Double?
    /// `geofence` when the unit detected the arrival, `driver` when only the driver's tap said so.
    public var arrivalSource: TransitionSource
    /// The vehicle left once before the stop's action was done (and came back or completed it elsewhere).
    public var leftUnfinished: Bool
    public var timeSource: TimeSource?

    public init(
        visitId: String, taskId: String, stopId: String, arrivedAt: Double, departedAt: Double, dwellSeconds: Double,
        arrivalDistance: Double?, arrivalSource: TransitionSource, leftUnfinished: Bool, timeSource: TimeSource?
    ) {
        self.visitId = visitId
        self.taskId = taskId
        self.stopId = stopId
        self.arrivedAt = arrivedAt
        self.departedAt = departedAt
        self.dwellSeconds = dwellSeconds
        self.arrivalDistance = arrivalDistance
        self.arrivalSource = arrivalSource
        self.leftUnfinished = leftUnfinished
        self.timeSource = timeSource
    }
}

/// The answer to a visit, trip or idle report (and to every replay of its key).
public struct ReportAccepted: Codable, Sendable, Equatable {
    /// The report's id.
    public var id: String
    /// Unix seconds when the backend stored it.
    public var receivedAt: Double
    public init(id: String, receivedAt: Double) {
        self.id = id
        self.receivedAt = receivedAt
    }
}
