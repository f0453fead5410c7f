/// The unit's health as the office needs it to tell which of its vans needs a technician, and why: what `agent.health`
/// answers (with the findings, `AgentHealth`) and what the unit reports to its backend (`BackendContract.UnitHealthReport`),
/// one shape for both. Small on purpose: a few hundred bytes compressed, riding the unit's other traffic (API 1.18).
public struct UnitHealth: Codable, Sendable, Equatable {
    /// Why the daemon's previous run ended, as the unit can tell it at its next start.
    public enum RestartCause: String, Codable, Sendable, CaseIterable {
        /// A graceful stop (SIGTERM: systemctl stop or restart, a shutdown).
        case cleanStop = "clean-stop"
        /// No clean-stop mark from a run of this boot: killed, crashed, or stopped by systemd's watchdog.
        case crash
        /// No clean-stop mark from a run of an earlier boot: the power went (or the system died) under it.
        case powerCut = "power-cut"
        /// Stopped to run a new release (driverd-update).
        case update
        /// Stopped to run a remote configuration document.
        case configuration
    }

    public struct Restart: Codable, Sendable, Equatable {
        /// When the run that ended began, Unix seconds.
        public var startedAt: Double
        public var cause: RestartCause
        public init(startedAt: Double, cause: RestartCause) {
            self.startedAt = startedAt
            self.cause = cause
        }
    }

    /// What waits to be sent.
    public struct Queue: Codable, Sendable, Equatable {
        /// Items (transitions, proofs, reports), not pings.
        public var items: Int
        public var pings: Int
        public var deadLetters: Int
        /// The oldest waiting item's or ping's age, seconds.
        public var oldestAgeSeconds: Double?
        public init(items: Int, pings: Int, deadLetters: Int, oldestAgeSeconds: Double?) {
            self.items = items
            self.pings = pings
            self.deadLetters = deadLetters
            self.oldestAgeSeconds = oldestAgeSeconds
        }
    }

    public struct GPS: Codable, Sendable, Equatable {
        public var link: GPSLinkState
        public var lastFixAgeSeconds: Double?
        public init(link: GPSLinkState, lastFixAgeSeconds: Double?) {
            self.link = link
            self.lastFixAgeSeconds = lastFixAgeSeconds
        }
    }

    public struct Certificate: Codable, Sendable, Equatable {
        public var state: UnitIdentityStatus.State
        /// Unix seconds.
        public var notAfter: Double?
        public var reason: String?
        public init(state: UnitIdentityStatus.State, notAfter: Double?, reason: String?) {
            self.state = state
            self.notAfter = notAfter
            self.reason = reason
        }
    }

    public struct Vehicle: Codable, Sendable, Equatable {
        /// The adapter's link (`connected`, `lost`, …).
        public var link: String
        /// The vehicle's 12 V battery at the adapter, volts.
        public var batteryVolts: Double?
        public init(link: String, batteryVolts: Double?) {
            self.link = link
            self.batteryVolts = batteryVolts
        }
    }

    /// Unix seconds, from the trusted clock, and where that came from.
    public var generatedAt: Double
    public var timeSource: TimeSource
    public var daemonVersion: String
    /// The screen's package, when installed.
    public var kioskVersion: String?
    /// The kernel's boot id: a new one means the unit rebooted.
    public var bootId: String?
    public var uptimeSeconds: Double
    public var onShift: Bool
    /// The daemon's previous runs that began in the last 24 hours, oldest first, each with why it ended.
    public var restarts: [Restart]
    public var store: StoreStatus
    public var queue: Queue
    public var gps: GPS
    public var clockSource: TimeSource
    /// The unit's own certificate (nil: the unit signs in with a password or a driver's login).
    public var certificate: Certificate?
    /// The OBD-II adapter, when one is configured.
    public var vehicle: Vehicle?
    /// Front ends connected to the local socket (the screen's bridge among them).
    public var frontEnds: Int
    /// The fleet's remote configuration document in force.
    public var remoteConfigVersion: Int?
    /// Warnings and errors logged since the previous report, by journald MESSAGE_ID ("-" for lines without one).
    public var logCounts: [String: Int]
    /// The daemon's peak resident memory, KiB.
    public var peakRSSKiB: Int?
    /// Seconds within which the unit's next report is due: a backend calls it silent only after that.
    public var nextReportWithin: Double

    public init(
        generatedAt: Double, timeSource: TimeSource, daemonVersion: String, kioskVersion: String?, bootId: String?, uptimeSeconds: Double,
        onShift: Bool, restarts: [Restart], store: StoreStatus, queue: Queue, gps: GPS, clockSource: TimeSource, certificate: Certificate?,
        vehicle: Vehicle?, frontEnds: Int, remoteConfigVersion: Int?, logCounts: [String: Int], peakRSSKiB: Int?, nextReportWithin: Double
    ) {
        self.generatedAt = generatedAt
        self.timeSource = timeSource
        self.daemonVersion = daemonVersion
        self.kioskVersion = kioskVersion
        self.bootId = bootId
        self.uptimeSeconds = uptimeSeconds
        self.onShift = onShift
        self.restarts = restarts
        self.store = store
        self.queue = queue
        self.gps = gps
        self.clockSource = clockSource
        self.certificate = certificate
        self.vehicle = vehicle
        self.frontEnds = frontEnds
        self.remoteConfigVersion = remoteConfigVersion
        self.logCounts = logCounts
        self.peakRSSKiB = peakRSSKiB
        self.nextReportWithin = nextReportWithin
    }
}

/// One thing wrong with a unit, in the words of docs/OPERATIONS.md: what the office reads first.
public struct HealthFinding: Codable, Sendable, Equatable {
    public enum Rule: String, Codable, Sendable, CaseIterable {
        case silent, storeFull = "store-full", storeReadOnly = "store-read-only", storeFailing = "store-failing", storeNearlyFull = "store-nearly-full"
        case queueOld = "queue-old", certificateExpiring = "certificate-expiring", certificateRefused = "certificate-refused"
        case restarting, gpsLost = "gps-lost", releaseBehind = "release-behind", deadLetters = "dead-letters"
    }

    public enum Severity: String, Codable, Sendable, Comparable {
        /// A technician or the office must act.
        case attention
        /// Worth a look; nothing is lost yet.
        case notice

        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs == .attention && rhs == .notice }
    }

    public var rule: Rule
    public var severity: Severity
    public var words: String
    /// Whether the driver can act on it (the screen shows only these, as "call the office").
    public var forDriver: Bool

    public init(rule: Rule, severity: Severity, words: String, forDriver: Bool = false) {
        self.rule = rule
        self.severity = severity
        self.words = words
        self.forDriver = forDriver
    }
}

/// Result of `agent.health`: the unit's health and what is wrong with it, worst first.
public struct AgentHealth: Codable, Sendable, Equatable {
    public var health: UnitHealth
    public var findings: [HealthFinding]

    public init(health: UnitHealth, findings: [HealthFinding]) {
        self.health = health
        self.findings = findings
    }
}
