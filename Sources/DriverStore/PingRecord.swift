import DriverAPI
import DriverDomain
import SQLiteKit

/// A row of `ping`: one sampled fix waiting to be sent.
public struct PingRecord: Sendable, Equatable, TableRecord {
    public static let tableName = "ping"

    public var id: Int64?
    public var fixTime: Double
    public var latitude: Double
    public var longitude: Double
    public var altitude: Double?
    public var speed: Double?
    public var track: Double?
    public var climb: Double?
    public var horizontalError: Double?
    public var verticalError: Double?
    public var fixMode: Int
    public var satellites: Int?
    public var motion: String
    public var reason: String
    /// Unix seconds when the daemon recorded it (from `timeSource`; the fix's own time is `fixTime`).
    public var recordedAt: Double
    /// Where `recordedAt` came from: `ntp`, `gps` or `unsynced` (nil in rows of releases before it was kept).
    public var timeSource: String?
    /// The batch the ping was put in for sending (kept until the backend acks it); nil while unsent.
    public var batchId: String?

    enum CodingKeys: String, CodingKey {
        case id, latitude, longitude, altitude, speed, track, climb, satellites, motion, reason
        case fixTime = "fix_time", horizontalError = "horizontal_error", verticalError = "vertical_error"
        case fixMode = "fix_mode", recordedAt = "recorded_at", batchId = "batch_id", timeSource = "time_source"
    }

    public init(fix: Fix, motion: Motion, reason: SamplingPolicy.Reason, recordedAt: Double, timeSource: TimeSource? = nil) {
        self.timeSource = timeSource?.rawValue
        fixTime = fix.time
        latitude = fix.latitude
        longitude = fix.longitude
        altitude = fix.altitude
        speed = fix.speed
        track = fix.track
        climb = fix.climb
        horizontalError = fix.horizontalError
        verticalError = fix.verticalError
        fixMode = fix.mode
        satellites = fix.satellitesUsed
        self.motion = motion.rawValue
        self.reason = reason.rawValue
        self.recordedAt = recordedAt
    }
}
