#if canImport(Glibc)
import Glibc
#endif

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

public enum Geo {
    static let earthRadius = 6_371_008.8

    /// Great-circle distance in metres (haversine).
    public static func distance(_ a: Fix, _ b: Fix) -> Double {
        distance(latitude1: a.latitude, longitude1: a.longitude, latitude2: b.latitude, longitude2: b.longitude)
    }

    public static func distance(latitude1: Double, longitude1: Double, latitude2: Double, longitude2: Double) -> Double {
        let phi1 = latitude1 * .pi / 180, phi2 = latitude2 * .pi / 180
        let dPhi = phi2 - phi1, dLambda = (longitude2 - longitude1) * .pi / 180
        let h = sin(dPhi / 2) * sin(dPhi / 2) + cos(phi1) * cos(phi2) * sin(dLambda / 2) * sin(dLambda / 2)
        return 2 * earthRadius * asin(min(1, h.squareRoot()))
    }

    /// The smaller angle between two headings, 0...180 degrees.
    public static func headingDifference(_ a: Double, _ b: Double) -> Double {
        let difference = abs(a - b).truncatingRemainder(dividingBy: 360)
        return difference > 180 ? 360 - difference : difference
    }
}
