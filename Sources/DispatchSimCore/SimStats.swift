import DriverAPI
import BackendContract
import DriverDomain

/// What the reference backend received (`GET /sim/stats`): the evidence tests use to prove exactly-once
/// delivery.
public struct SimStats: Codable, Sendable, Equatable {
    public struct AcceptedUpdate: Codable, Sendable, Equatable {
        public var taskId: String
        public var status: TaskStatus
        public var idempotencyKey: String
        /// Unix seconds when the backend applied it.
        public var time: Double
        /// The client's stamp of the action and its source, as sent.
        public var timestamp: Double?
        public var timeSource: TimeSource?
        /// Who made it, how far from its stop, and why beyond the geofence, as sent.
        public var source: TransitionSource?
        public var stopDistance: Double?
        public var outsideReason: OutsideReason?
        public var position: PositionCheck?
    }

    public struct PODRecord: Codable, Sendable, Equatable {
        public var taskId: String
        public var type: PODType
        public var accepted: Bool
        public var sha256: String?
        public var bytes: Int?
        public var time: Double
    }

    /// A batch as it arrived (first copies only), oldest first; the newest 10,000 are kept.
    public struct BatchRecord: Codable, Sendable, Equatable {
        public var batchId: String
        public var pings: Int
        public var oldest: Double
        public var newest: Double
        public var time: Double
    }

    /// A unit's health report as it arrived (first copies only): its body's bytes on the wire (gzipped when it was
    /// sent so); the newest 10,000 are kept.
    public struct HealthReceipt: Codable, Sendable, Equatable {
        public var driverId: String
        public var time: Double
        public var bytes: Int
    }

    public var statusUpdates: [AcceptedUpdate] = []
    public var healthReports: [HealthReceipt] = []
    public var batchLog: [BatchRecord] = []
    /// Replays of a known idempotency key (status updates and POD).
    public var duplicateRequests = 0
    /// Status updates answered 409.
    public var refusedStatusUpdates = 0
    public var pingsReceived = 0
    public var uniquePings = 0
    public var batches = 0
    /// First copies of batches that came over a rider WebSocket (filled in by the WebSocket handler).
    public var webSocketBatches = 0
    public var duplicateBatches = 0
    /// Batches that carried a heartbeat (a unit without a usable fix says so).
    public var heartbeats = 0
    public var pods: [PODRecord] = []
    public var otpFailures = 0
    public var pushesSent = 0
    /// Requests answered or dropped and connections reset by fault injection (filled in by the server).
    public var faultsInjected = 0
    /// Requests under /api/ that reached the server (filled in by the server).
    public var requests = 0
    /// `requests` by route (`route(of:)`): where a link's extra requests go.
    public var requestsByRoute: [String: Int] = [:]
    /// Bytes of the requests under /api/: request line, headers and body (filled in by the server).
    public var requestBytes = 0
    /// Text frames received on rider WebSockets and their bytes (text plus 8 header bytes; filled in by the server).
    public var webSocketFrames = 0
    public var webSocketBytes = 0
    /// Open rider WebSockets (filled in by the server).
    public var webSockets = 0

    public init() {}

    /// A request's route: its path without the query, and a segment that names one thing (holds a digit or is
    /// longer than 24 characters) as `*`, so `/api/v1/tasks/t-17/status` and `/api/v1/tasks/t-18/status` count together.
    public static func route(of path: String) -> String {
        let bare = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        return bare.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.count > 24 || segment.contains(where: \.isNumber) && segment != "v1" ? "*" : String(segment)
        }.joined(separator: "/")
    }
}
