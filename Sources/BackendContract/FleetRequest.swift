/// What the fleet may ask a unit from afar (a `FLEET_REQUEST` push carries one).
public enum FleetRequestKind: String, Codable, Sendable, Equatable, CaseIterable {
    /// The support bundle of `driverctl diag --bundle`, uploaded in chunks.
    case diagnosticBundle = "DIAGNOSTIC_BUNDLE"
    /// The unit's position now, once.
    case positionReport = "POSITION_REPORT"
    /// A log level until an expiry.
    case logLevel = "LOG_LEVEL"
}

public struct FleetRequest: Codable, Sendable, Equatable {
    /// Unique per request: the unit answers each once.
    public var requestId: String
    public var kind: FleetRequestKind
    /// `DIAGNOSTIC_BUNDLE`: how much of the journal, seconds back from now (default a day).
    public var windowSeconds: Double?
    /// `LOG_LEVEL`: trace, debug, info, notice, warning, error or critical.
    public var logLevel: String?
    /// `LOG_LEVEL`: seconds until the configured level returns (at most a day).
    public var expiresInSeconds: Double?

    public init(requestId: String, kind: FleetRequestKind, windowSeconds: Double? = nil, logLevel: String? = nil, expiresInSeconds: Double? = nil) {
        self.requestId = requestId
        self.kind = kind
        self.windowSeconds = windowSeconds
        self.logLevel = logLevel
        self.expiresInSeconds = expiresInSeconds
    }
}

public enum FleetRequestStatus: String, Codable, Sendable, Equatable {
    /// Done (a position, a log level set), or for a bundle: built, its chunks on their way.
    case done = "DONE"
    /// Not done; `detail` says why.
    case refused = "REFUSED"
}

/// `POST /api/v1/rider/requests/acks`, sent with an `Idempotency-Key` header: the unit's one answer to a request.
public struct FleetRequestAck: Codable, Sendable, Equatable {
    public var requestId: String
    public var kind: FleetRequestKind
    public var status: FleetRequestStatus
    public var detail: String?
    /// `POSITION_REPORT`: the latest accepted fix (at most five minutes old) and its time.
    public var position: Location?
    public var positionTime: Double?
    /// `DIAGNOSTIC_BUNDLE`: what the chunks will add up to.
    public var bundleBytes: Int?
    public var bundleSHA256: String?
    public var chunks: Int?
    /// Unix seconds, from the unit's trusted clock.
    public var at: Double

    public init(
        requestId: String, kind: FleetRequestKind, status: FleetRequestStatus, detail: String? = nil, position: Location? = nil,
        positionTime: Double? = nil, bundleBytes: Int? = nil, bundleSHA256: String? = nil, chunks: Int? = nil, at: Double
    ) {
        self.requestId = requestId
        self.kind = kind
        self.status = status
        self.detail = detail
        self.position = position
        self.positionTime = positionTime
        self.bundleBytes = bundleBytes
        self.bundleSHA256 = bundleSHA256
        self.chunks = chunks
        self.at = at
    }
}

/// The answer to `PUT /api/v1/rider/diagnostics/{requestId}/chunks/{index}?count=N&sha256=HEX` (the body is the
/// chunk's bytes): idempotent per request and index, so a chunk sent again after a crash is stored once.
public struct ChunkAccepted: Codable, Sendable, Equatable {
    public var requestId: String
    public var index: Int
    /// Distinct chunks the backend holds for this bundle.
    public var received: Int
    /// All chunks are in and their bytes match `sha256`.
    public var complete: Bool

    public init(requestId: String, index: Int, received: Int, complete: Bool) {
        self.requestId = requestId
        self.index = index
        self.received = received
        self.complete = complete
    }
}
