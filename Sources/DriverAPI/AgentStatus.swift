/// Result of `agent.status`: a summary of the daemon, one section per subsystem.
///
/// A subsystem that this build does not have yet reports `available: false` with a reason rather than
/// inventing values; later releases fill the sections in (a minor API version bump each).
public struct AgentStatus: Codable, Sendable, Equatable {
    public var daemonVersion: String
    public var apiMajor: Int
    public var apiMinor: Int
    public var uptimeSeconds: Double
    public var rpc: RPCSection
    public var gps: GPSStatus
    public var sampling: SamplingStatus
    public var outbox: SectionAvailability
    public var link: SectionAvailability
    public var shift: SectionAvailability
    /// The outbox and the backend link in detail (API 1.2).
    public var uplink: OutboxStatus?
    /// The shift and the driving-safety gate (API 1.4).
    public var shiftStatus: ShiftStatus?
    public var safety: SafetyStatus?
    /// Where stamps come from and how the system clock stands (API 1.6).
    public var clock: ClockStatus?

    public init(
        daemonVersion: String, apiMajor: Int, apiMinor: Int, uptimeSeconds: Double, rpc: RPCSection,
        gps: GPSStatus, sampling: SamplingStatus, outbox: SectionAvailability,
        link: SectionAvailability, shift: SectionAvailability, uplink: OutboxStatus? = nil,
        shiftStatus: ShiftStatus? = nil, safety: SafetyStatus? = nil, clock: ClockStatus? = nil
    ) {
        self.clock = clock
        self.uplink = uplink
        self.shiftStatus = shiftStatus
        self.safety = safety
        self.daemonVersion = daemonVersion
        self.apiMajor = apiMajor
        self.apiMinor = apiMinor
        self.uptimeSeconds = uptimeSeconds
        self.rpc = rpc
        self.gps = gps
        self.sampling = sampling
        self.outbox = outbox
        self.link = link
        self.shift = shift
    }
}

/// The local API socket as the daemon sees it.
public struct RPCSection: Codable, Sendable, Equatable {
    public var socketPath: String
    /// True when systemd passed the listening socket (socket activation).
    public var socketActivated: Bool
    public var openConnections: Int
    public var requestsServed: Int

    public init(socketPath: String, socketActivated: Bool, openConnections: Int, requestsServed: Int) {
        self.socketPath = socketPath
        self.socketActivated = socketActivated
        self.openConnections = openConnections
        self.requestsServed = requestsServed
    }
}

/// A subsystem section that says honestly whether it has anything to report.
public struct SectionAvailability: Codable, Sendable, Equatable {
    public var available: Bool
    public var reason: String?

    public init(available: Bool, reason: String? = nil) {
        self.available = available
        self.reason = reason
    }

    public static func notInThisBuild(_ what: String) -> SectionAvailability {
        SectionAvailability(available: false, reason: "\(what) is not part of this build yet")
    }
}
