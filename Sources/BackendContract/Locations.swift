/// One recorded position.
public struct LocationPing: Codable, Sendable, Equatable {
    public var lat: Double
    public var lng: Double
    public var accuracy: Double?
    /// Metres per second.
    public var speed: Double?
    /// Degrees from true north.
    public var heading: Double?
    /// Unix seconds of the fix.
    public var timestamp: Double

    public init(lat: Double, lng: Double, accuracy: Double? = nil, speed: Double? = nil, heading: Double? = nil, timestamp: Double) {
        self.lat = lat
        self.lng = lng
        self.accuracy = accuracy
        self.speed = speed
        self.heading = heading
        self.timestamp = timestamp
    }
}

/// `POST /api/v1/rider/locations` (or a `locations` WebSocket frame): pings with a batch id chosen by the
/// client. The backend stores a batch id once and acks every copy, so a resent batch is harmless.
public struct LocationBatch: Codable, Sendable, Equatable {
    public var batchId: String
    public var pings: [LocationPing]

    public init(batchId: String, pings: [LocationPing]) {
        self.batchId = batchId
        self.pings = pings
    }

    public static let maxPings = 500
    public static let maxBytes = 256 * 1024
}

/// The backend's ack of a batch; only after it may the client forget the batch's pings.
public struct BatchAck: Codable, Sendable, Equatable {
    public var batchId: String
    /// Pings in this copy of the batch.
    public var received: Int
    /// Pings the backend had not seen before (0 for a duplicate batch).
    public var unique: Int
    /// The batch id had been acked before.
    public var duplicate: Bool

    public init(batchId: String, received: Int, unique: Int, duplicate: Bool) {
        self.batchId = batchId
        self.received = received
        self.unique = unique
        self.duplicate = duplicate
    }
}
