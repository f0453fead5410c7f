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
    /// The unit's own identity towards the backend (API 1.16): nil for a unit with neither a certificate nor a claim
    /// token (it signs in with a username and password, or not at all).
    public var identity: UnitIdentityStatus?
    /// The state directory's storage: full, read-only or failing said here before a change is refused (API 1.18).
    public var store: StoreStatus?

    public init(
        daemonVersion: String, apiMajor: Int, apiMinor: Int, uptimeSeconds: Double, rpc: RPCSection,
        gps: GPSStatus, sampling: SamplingStatus, outbox: SectionAvailability,
        link: SectionAvailability, shift: SectionAvailability, uplink: OutboxStatus? = nil,
        shiftStatus: ShiftStatus? = nil, safety: SafetyStatus? = nil, clock: ClockStatus? = nil, identity: UnitIdentityStatus? = nil,
        store: StoreStatus? = nil
    ) {
        self.store = store
        self.clock = clock
        self.identity = identity
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

/// The unit's certificate from the fleet's CA, which every connection to the backend presents (mutual TLS).
public struct UnitIdentityStatus: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable, CaseIterable {
        /// The unit holds a certificate: `subject`, `serial` and `notAfter` say which.
        case enrolled
        /// A claim token is configured and the backend has not answered yet (`reason`: the last failure).
        case enrolling
        /// The backend refused the claim token or a renewal (`reason`); the unit tries again hourly, keeping what is queued.
        case refused
        /// The fleet revoked the unit's certificate: nothing it sends is taken (tried again hourly, everything kept).
        case revoked
    }

    public var state: State
    /// The certificate in force (also when refused or revoked): its subject (`CN=driverd-…`, from the unit's public key).
    public var subject: String?
    /// The certificate's serial number, hex.
    public var serial: String?
    /// When the certificate expires, Unix seconds.
    public var notAfter: Double?
    public var reason: String?

    public init(state: State, subject: String? = nil, serial: String? = nil, notAfter: Double? = nil, reason: String? = nil) {
        self.state = state
        self.subject = subject
        self.serial = serial
        self.notAfter = notAfter
        self.reason = reason
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
