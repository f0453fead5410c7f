import DriverAPI

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

/// The unit's own state at a moment: sent alone, as a heartbeat, when the receiver has no usable fix, so the
/// backend learns that the position is unknown instead of seeing an old one as if it were new.
public struct UnitHeartbeat: Codable, Sendable, Equatable {
    /// Unix seconds, and where that stamp came from.
    public var timestamp: Double
    public var timeSource: TimeSource
    /// The receiver's state: `noFix` (connected, no usable fix) or `lost` (no receiver).
    public var gps: String
    /// Unix seconds of the last usable fix (receiver time), when there was one.
    public var lastFixTime: Double?

    public init(timestamp: Double, timeSource: TimeSource, gps: String, lastFixTime: Double?) {
        self.timestamp = timestamp
        self.timeSource = timeSource
        self.gps = gps
        self.lastFixTime = lastFixTime
    }
}

/// `POST /api/v1/rider/locations` (or a `locations` WebSocket frame): pings with a batch id chosen by the
/// client. The backend stores a batch id once and acks every copy, so a resent batch is harmless. Ping
/// timestamps are the receiver's (GPS) time of each fix. A batch without pings carries a `heartbeat`.
public struct LocationBatch: Codable, Sendable, Equatable {
    public var batchId: String
    public var pings: [LocationPing]
    public var heartbeat: UnitHeartbeat?
    /// Seconds within which the unit's next batch is due at its current cadence (5 s moving, 120 s parked with the
    /// ignition off by default): a backend calls the unit stale only after it passed. Absent when no report is due
    /// (the shift ended) and from older units.
    public var nextBatchWithin: Double?
    /// Earlier batches sent before and not acked (their request was lost on the link), older first, each stored once
    /// under its own id as if sent alone and acked in `BatchAck.carried`: a lost batch rides with the next one instead
    /// of costing a request of its own, and one that did arrive is not stored twice. Each has pings and nothing else;
    /// the pings of the whole request are at most `maxPings`. A backend that does not list them in its ack has not
    /// stored them, and the unit sends them alone.
    public var carried: [LocationBatch]?

    public init(
        batchId: String, pings: [LocationPing], heartbeat: UnitHeartbeat? = nil, nextBatchWithin: Double? = nil,
        carried: [LocationBatch]? = nil
    ) {
        self.batchId = batchId
        self.pings = pings
        self.heartbeat = heartbeat
        self.nextBatchWithin = nextBatchWithin
        self.carried = carried
    }

    /// The most pings in one request (a batch with the batches it carries).
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
    /// The acks of the batches the request carried (`LocationBatch.carried`), in their order; absent from a backend
    /// that does not take carried batches (it stored none of them).
    public var carried: [BatchAck]?

    public init(batchId: String, received: Int, unique: Int, duplicate: Bool, carried: [BatchAck]? = nil) {
        self.batchId = batchId
        self.received = received
        self.unique = unique
        self.duplicate = duplicate
        self.carried = carried
    }
}
