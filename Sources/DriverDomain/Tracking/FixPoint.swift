import DriverAPI

/// What the rules downstream of the fix filter need of a fix: when, where, how fast, how sure.
public struct FixPoint: Sendable, Equatable, Codable {
    /// Seconds (receiver time: only differences count).
    public var time: Double
    public var lat: Double
    public var lng: Double
    public var speed: Double?
    public var horizontalError: Double?

    public init(time: Double, lat: Double, lng: Double, speed: Double?, horizontalError: Double?) {
        self.time = time
        self.lat = lat
        self.lng = lng
        self.speed = speed
        self.horizontalError = horizontalError
    }

    public init(_ fix: Fix) {
        self.init(time: fix.time, lat: fix.latitude, lng: fix.longitude, speed: fix.speed, horizontalError: fix.horizontalError)
    }
}
