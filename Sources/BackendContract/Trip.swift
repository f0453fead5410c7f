import DriverAPI
import DriverDomain

/// `POST /api/v1/rider/trips`, sent with an `Idempotency-Key` header (the trip's id): a trip from moving off
/// with the ignition on to the stand that ended it. Times are the receiver's (GPS) time.
public struct TripReport: Codable, Sendable, Equatable {
    public var tripId: String
    public var startedAt: Double
    public var endedAt: Double
    /// Odometer distance (accepted fixes only; gaps bridged as straight lines).
    public var distanceMeters: Double
    /// Of `distanceMeters`, what was bridged across gaps without fixes.
    public var bridgedMeters: Double
    public var start: Location
    public var end: Location
    public var timeSource: TimeSource?

    public init(
        tripId: String, startedAt: Double, endedAt: Double, distanceMeters: Double, bridgedMeters: Double, start: Location, end: Location,
        timeSource: TimeSource?
    ) {
        self.tripId = tripId
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.distanceMeters = distanceMeters
        self.bridgedMeters = bridgedMeters
        self.start = start
        self.end = end
        self.timeSource = timeSource
    }
}

/// `POST /api/v1/rider/idles`, sent with an `Idempotency-Key` header (its id): the engine on while the vehicle
/// stood for longer than the unit's idle limit, as one start and end pair.
public struct IdleReport: Codable, Sendable, Equatable {
    public var idleId: String
    public var startedAt: Double
    public var endedAt: Double
    public var durationSeconds: Double
    public var location: Location
    public var timeSource: TimeSource?

    public init(idleId: String, startedAt: Double, endedAt: Double, durationSeconds: Double, location: Location, timeSource: TimeSource?) {
        self.idleId = idleId
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.durationSeconds = durationSeconds
        self.location = location
        self.timeSource = timeSource
    }
}
