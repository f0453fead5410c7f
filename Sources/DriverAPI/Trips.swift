/// A finished trip or idle period (`trips.list`).
public struct TripView: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, Equatable { case trip, idle }
    public var id: String
    public var kind: Kind
    /// Unix seconds (receiver time).
    public var startedAt: Double
    public var endedAt: Double
    /// Distance of a trip; 0 for idling.
    public var distanceMeters: Double
    /// `queued` or `sent`.
    public var state: String
    /// The vehicle's own odometer distance (an OBD-II adapter, a car that reports PID A6; API 1.11).
    public var vehicleDistanceMeters: Double?
    public init(id: String, kind: Kind, startedAt: Double, endedAt: Double, distanceMeters: Double, state: String, vehicleDistanceMeters: Double? = nil) {
        self.vehicleDistanceMeters = vehicleDistanceMeters
        self.id = id
        self.kind = kind
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.distanceMeters = distanceMeters
        self.state = state
    }
}

/// Result of `trips.list`: the latest trips and idle periods, newest first.
public struct TripList: Codable, Sendable, Equatable {
    public var trips: [TripView]
    public init(trips: [TripView]) { self.trips = trips }
}

// MARK: Methods

extension Methods {
    /// The latest trips and idle periods, newest first.
    ///
    /// driverctl: `driverctl trips`.
    ///
    /// Params: none. Result: `{"trips": [{"id": "…", "kind": "trip", "startedAt": 1795852800, "endedAt": 1795853400,
    /// "distanceMeters": 5230, "state": "sent"}]}`, the newest 50 first (trips and idle periods, `kind` `idle` with
    /// distance 0). Both are sent to the backend once through the outbox (`POST /api/v1/rider/trips` and
    /// `/api/v1/rider/idles`).
    ///
    /// The odometer counts accepted fixes only: between fixes at most 5 s apart it integrates the receiver's
    /// (Doppler) speed, so position scatter and multipath spikes do not lengthen it; across a longer gap (a tunnel, a
    /// restart, a kill) it adds the straight line between the two fixes and flags it as bridged. Nothing is counted
    /// while the vehicle stands, or off shift. A trip starts when the vehicle moves with the ignition on (or with no
    /// ignition input) and ends 60 s after the ignition goes off, or when the motion detector says the vehicle stands
    /// (its verdict holds a minute of standing, so a red light never ends one), at the moment the stand began.
    /// Idling is the ignition on while standing for longer than `trips.idle_seconds` (300), one start/end pair
    /// reported when it ends. Times are the receiver's (GPS) time.
    public static let tripsList = Method<NoParams, TripList>("trips.list", mutating: false)

    /// This file's methods, in `Methods.all`.
    static let trips: [MethodDescriptor] = [tripsList.descriptor]
}
