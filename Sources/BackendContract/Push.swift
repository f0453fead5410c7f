public enum PushKind: String, Codable, Sendable, Equatable, CaseIterable {
    case taskAssigned = "TASK_ASSIGNED"
    case routeChanged = "ROUTE_CHANGED"
    case taskCancelled = "TASK_CANCELLED"
    case customerMessage = "CUSTOMER_MESSAGE"
    case eta = "ETA"
    /// A new configuration document waits at `GET /api/v1/rider/config` (for the unit, never shown to the driver).
    case configUpdate = "CONFIG_UPDATE"
    /// A release waits at `GET /api/v1/rider/release` (for the unit, never shown to the driver).
    case updateAvailable = "UPDATE_AVAILABLE"
    /// The fleet asks the unit for something (`request`): never shown to the driver.
    case fleetRequest = "FLEET_REQUEST"
}

/// Something the backend tells the driver. `id` grows by one per driver, so a client that remembers the last
/// id it saw can ask for what it missed (`GET /api/v1/rider/pushes?after=ID`, or `hello` on the WebSocket).
public struct Push: Codable, Sendable, Equatable {
    public var id: Int
    public var kind: PushKind
    public var taskId: String?
    /// The task as it is now (assigned, route changed, cancelled).
    public var task: RiderTask?
    /// The new stop order, when it changed.
    public var sequence: [String]?
    /// A customer's or dispatcher's text.
    public var message: String?
    public var etaSeconds: Double?
    /// `FLEET_REQUEST`: what is asked.
    public var request: FleetRequest?
    public var sentAt: Double

    public init(
        id: Int, kind: PushKind, taskId: String? = nil, task: RiderTask? = nil, sequence: [String]? = nil,
        message: String? = nil, etaSeconds: Double? = nil, request: FleetRequest? = nil, sentAt: Double
    ) {
        self.request = request
        self.id = id
        self.kind = kind
        self.taskId = taskId
        self.task = task
        self.sequence = sequence
        self.message = message
        self.etaSeconds = etaSeconds
        self.sentAt = sentAt
    }
}

/// `GET /api/v1/rider/pushes?after=ID`.
public struct PushList: Codable, Sendable, Equatable {
    public var pushes: [Push]
    public init(pushes: [Push]) { self.pushes = pushes }
}
