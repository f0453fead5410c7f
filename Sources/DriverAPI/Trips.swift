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
    public static let tripsList = Method<NoParams, TripList>("trips.list", mutating: false)

    /// This file's methods, in `Methods.all`.
    static let trips: [MethodDescriptor] = [tripsList.descriptor]
}
