/// One position report from the receiver, in SI units. Optional fields are those the receiver may omit.
public struct Fix: Sendable, Equatable, Codable {
    /// Seconds since 1970 (UTC), from the receiver: decisions use this clock, never the wall clock.
    public var time: Double
    public var latitude: Double
    public var longitude: Double
    /// Metres above the ellipsoid.
    public var altitude: Double?
    /// Metres per second over ground.
    public var speed: Double?
    /// Degrees from true north.
    public var track: Double?
    /// Metres per second, up positive.
    public var climb: Double?
    /// Estimated horizontal error, metres (95 %).
    public var horizontalError: Double?
    /// Estimated vertical error, metres (95 %).
    public var verticalError: Double?
    /// 2 for a 2D fix, 3 for 3D.
    public var mode: Int
    public var satellitesUsed: Int?

    public init(
        time: Double, latitude: Double, longitude: Double, altitude: Double? = nil, speed: Double? = nil,
        track: Double? = nil, climb: Double? = nil, horizontalError: Double? = nil, verticalError: Double? = nil,
        mode: Int = 3, satellitesUsed: Int? = nil
    ) {
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.speed = speed
        self.track = track
        self.climb = climb
        self.horizontalError = horizontalError
        self.verticalError = verticalError
        self.mode = mode
        self.satellitesUsed = satellitesUsed
    }
}

