import DriverAPI
import DriverDomain

/// `POST /api/v1/rider/health`, sent with an `Idempotency-Key` header (its id): the unit's health (`UnitHealth`) when
/// something in it changed, and at least every 30 minutes on shift, riding the unit's other traffic. The backend keeps
/// each unit's newest and shows the fleet (`GET /api/v1/fleet/health`).
public struct UnitHealthReport: Codable, Sendable, Equatable {
    public var reportId: String
    public var health: UnitHealth

    public init(reportId: String, health: UnitHealth) {
        self.reportId = reportId
        self.health = health
    }
}

/// `GET /api/v1/fleet/health`: every unit's newest report with what is wrong with it (`HealthRules`: the unit's own
/// findings and the backend's, silence and a release behind), units needing attention first.
public struct FleetHealthView: Codable, Sendable, Equatable {
    public struct Unit: Codable, Sendable, Equatable {
        /// Who sent it: the driver's id (or the unit's certificate subject).
        public var unit: String
        /// When the backend last heard the unit (a report, a batch or a heartbeat), Unix seconds.
        public var lastHeard: Double
        public var findings: [HealthFinding]
        public var health: UnitHealth

        public init(unit: String, lastHeard: Double, findings: [HealthFinding], health: UnitHealth) {
            self.unit = unit
            self.lastHeard = lastHeard
            self.findings = findings
            self.health = health
        }

        /// Needs someone: a finding of `attention`.
        public var needsAttention: Bool { findings.contains { $0.severity == .attention } }
    }

    public var generatedAt: Double
    /// The release the fleet runs, when the backend publishes one.
    public var fleetRelease: String?
    public var units: [Unit]

    public init(generatedAt: Double, fleetRelease: String?, units: [Unit]) {
        self.generatedAt = generatedAt
        self.fleetRelease = fleetRelease
        self.units = units
    }

    /// Units needing attention first (most findings of attention first), then those with notices, then the rest; by
    /// name within each.
    public static func ordered(_ units: [Unit]) -> [Unit] {
        units.sorted { a, b in
            let rank = { (unit: Unit) in (unit.needsAttention ? 0 : unit.findings.isEmpty ? 2 : 1, -unit.findings.count { $0.severity == .attention }) }
            let (ra, rb) = (rank(a), rank(b))
            return ra != rb ? ra < rb : readingOrder(a.unit) < readingOrder(b.unit)
        }
    }

    /// A unit's name as a person orders it: "drv-2" before "drv-10" (its trailing number counted as a number).
    public static func readingOrder(_ name: String) -> (String, Int, String) {
        let digits = name.reversed().prefix { $0.isASCII && $0.isNumber }
        return (String(name.dropLast(digits.count)), Int(String(digits.reversed())) ?? -1, name)
    }
}
