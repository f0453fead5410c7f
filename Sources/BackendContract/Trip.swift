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
    /// The vehicle's own odometer, fuel and engine run time over the trip, when an OBD-II adapter reads them.
    public var vehicle: TripVehicle?

    public init(
        tripId: String, startedAt: Double, endedAt: Double, distanceMeters: Double, bridgedMeters: Double, start: Location, end: Location,
        timeSource: TimeSource?, vehicle: TripVehicle? = nil
    ) {
        self.vehicle = vehicle
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

/// `POST /api/v1/rider/harsh-events`, sent with an `Idempotency-Key` header (its id): harsh braking or
/// acceleration (beyond the unit's thresholds, with the ignition on and above 10 km/h), low priority.
public struct HarshEventReport: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, Equatable {
        case braking = "HARSH_BRAKING"
        case acceleration = "HARSH_ACCELERATION"
    }

    public var eventId: String
    public var kind: Kind
    public var startedAt: Double
    public var endedAt: Double
    /// The strongest speed change over one second, m/s² (positive for both kinds).
    public var peakMps2: Double
    /// The unit's threshold when it happened, m/s².
    public var thresholdMps2: Double
    public var speedFrom: Double
    public var speedTo: Double
    /// Where it began.
    public var location: Location
    public var timeSource: TimeSource?

    public init(
        eventId: String, kind: Kind, startedAt: Double, endedAt: Double, peakMps2: Double, thresholdMps2: Double, speedFrom: Double,
        speedTo: Double, location: Location, timeSource: TimeSource?
    ) {
        self.eventId = eventId
        self.kind = kind
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.peakMps2 = peakMps2
        self.thresholdMps2 = thresholdMps2
        self.speedFrom = speedFrom
        self.speedTo = speedTo
        self.location = location
        self.timeSource = timeSource
    }
}

/// `POST /api/v1/rider/sos`, sent with an `Idempotency-Key` header (its id): a driver's call for help. Sent
/// before anything else and repeated until acked; the backend stores it once per id.
public struct SOSReport: Codable, Sendable, Equatable {
    public var sosId: String
    /// Unix seconds, from the unit's trusted clock.
    public var raisedAt: Double
    public var timeSource: TimeSource
    /// The latest accepted fix, if at most five minutes old; nil without one (`gps` says why).
    public var location: Location?
    /// Unix seconds of that fix.
    public var fixTime: Double?
    /// The receiver's state: `connected`, `noFix`, `lost` or `connecting`.
    public var gps: String
    public var note: String?

    public init(sosId: String, raisedAt: Double, timeSource: TimeSource, location: Location?, fixTime: Double?, gps: String, note: String?) {
        self.sosId = sosId
        self.raisedAt = raisedAt
        self.timeSource = timeSource
        self.location = location
        self.fixTime = fixTime
        self.gps = gps
        self.note = note
    }
}
