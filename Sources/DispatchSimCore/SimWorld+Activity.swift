import BackendContract
import DriverAPI
import DriverDomain

/// Trips, idle periods, harsh driving events and SOS calls as the backend stored them (first copies), per kind
/// (`GET /sim/activity`).
public struct ActivityList: Codable, Sendable, Equatable {
    public struct Trip: Codable, Sendable, Equatable {
        public var driverId: String
        public var report: TripReport
        public var receivedAt: Double
    }

    public struct Idle: Codable, Sendable, Equatable {
        public var driverId: String
        public var report: IdleReport
        public var receivedAt: Double
    }

    public struct Harsh: Codable, Sendable, Equatable {
        public var driverId: String
        public var report: HarshEventReport
        public var receivedAt: Double
    }

    public struct SOS: Codable, Sendable, Equatable {
        public var driverId: String
        public var report: SOSReport
        public var receivedAt: Double
    }

    public struct Vehicle: Codable, Sendable, Equatable {
        public var driverId: String
        public var report: VehicleEventReport
        public var receivedAt: Double
    }

    public var trips: [Trip] = []
    public var idles: [Idle] = []
    public var harshEvents: [Harsh] = []
    public var sos: [SOS] = []
    public var vehicleEvents: [Vehicle] = []

    public init() {}

    // Lists stored before harsh events existed (`--state` files) still load.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        trips = try container.decodeIfPresent([Trip].self, forKey: .trips) ?? []
        idles = try container.decodeIfPresent([Idle].self, forKey: .idles) ?? []
        harshEvents = try container.decodeIfPresent([Harsh].self, forKey: .harshEvents) ?? []
        sos = try container.decodeIfPresent([SOS].self, forKey: .sos) ?? []
        vehicleEvents = try container.decodeIfPresent([Vehicle].self, forKey: .vehicleEvents) ?? []
    }
}

/// The list and its idempotency ledger; optional in the world, so an older `--state` file still loads.
struct ActivityLog: Codable, Sendable {
    var list = ActivityList()
    var ledger = IdempotencyLedger<ReportOutcome>()
}

extension SimWorld {
    /// Every trip and idle period received.
    public var activity: ActivityList { activityLog?.list ?? ActivityList() }

    var activityLedger: IdempotencyLedger<ReportOutcome> {
        get { activityLog?.ledger ?? IdempotencyLedger() }
        set {
            var log = activityLog ?? ActivityLog()
            log.ledger = newValue
            activityLog = log
        }
    }

    public mutating func recordTrip(
        _ report: TripReport, driverId: String, idempotencyKey: String, bodyDigest: String, now: Double
    ) -> (outcome: ReportOutcome, replayed: Bool) {
        idempotent(\.activityLedger, key: idempotencyKey, digest: "trip:" + bodyDigest, keyReused: .keyReused, notFound: .notFound) { world in
            guard world.driver(id: driverId) != nil, report.endedAt >= report.startedAt, report.distanceMeters >= 0, report.bridgedMeters >= 0,
                  report.bridgedMeters <= report.distanceMeters + 0.5
            else { return .invalid("endedAt must not be before startedAt; distances not negative, bridgedMeters within distanceMeters") }
            var log = world.activityLog ?? ActivityLog()
            log.list.trips.append(.init(driverId: driverId, report: report, receivedAt: now))
            world.activityLog = log
            return .accepted(ReportAccepted(id: report.tripId, receivedAt: now))
        }
    }

    public mutating func recordIdle(
        _ report: IdleReport, driverId: String, idempotencyKey: String, bodyDigest: String, now: Double
    ) -> (outcome: ReportOutcome, replayed: Bool) {
        idempotent(\.activityLedger, key: idempotencyKey, digest: "idle:" + bodyDigest, keyReused: .keyReused, notFound: .notFound) { world in
            guard world.driver(id: driverId) != nil, report.endedAt >= report.startedAt, report.durationSeconds >= 0 else {
                return .invalid("endedAt must not be before startedAt, and durationSeconds not negative")
            }
            var log = world.activityLog ?? ActivityLog()
            log.list.idles.append(.init(driverId: driverId, report: report, receivedAt: now))
            world.activityLog = log
            return .accepted(ReportAccepted(id: report.idleId, receivedAt: now))
        }
    }

    public mutating func recordHarsh(
        _ report: HarshEventReport, driverId: String, idempotencyKey: String, bodyDigest: String, now: Double
    ) -> (outcome: ReportOutcome, replayed: Bool) {
        idempotent(\.activityLedger, key: idempotencyKey, digest: "harsh:" + bodyDigest, keyReused: .keyReused, notFound: .notFound) { world in
            guard world.driver(id: driverId) != nil, report.endedAt >= report.startedAt, report.peakMps2 >= 0, report.thresholdMps2 >= 0,
                  report.speedFrom >= 0, report.speedTo >= 0
            else { return .invalid("endedAt must not be before startedAt; peakMps2, thresholdMps2 and speeds not negative") }
            var log = world.activityLog ?? ActivityLog()
            log.list.harshEvents.append(.init(driverId: driverId, report: report, receivedAt: now))
            world.activityLog = log
            return .accepted(ReportAccepted(id: report.eventId, receivedAt: now))
        }
    }

    public mutating func recordSOS(
        _ report: SOSReport, driverId: String, idempotencyKey: String, bodyDigest: String, now: Double
    ) -> (outcome: ReportOutcome, replayed: Bool) {
        idempotent(\.activityLedger, key: idempotencyKey, digest: "sos:" + bodyDigest, keyReused: .keyReused, notFound: .notFound) { world in
            guard world.driver(id: driverId) != nil, report.raisedAt.isFinite, (report.note?.count ?? 0) <= 500,
                  report.location.map({ (-90...90).contains($0.lat) && (-180...180).contains($0.lng) }) ?? true
            else { return .invalid("raisedAt must be a number, the location in range and the note at most 500 characters") }
            var log = world.activityLog ?? ActivityLog()
            log.list.sos.append(.init(driverId: driverId, report: report, receivedAt: now))
            world.activityLog = log
            return .accepted(ReportAccepted(id: report.sosId, receivedAt: now))
        }
    }

    public mutating func recordVehicleEvent(
        _ report: VehicleEventReport, driverId: String, idempotencyKey: String, bodyDigest: String, now: Double
    ) -> (outcome: ReportOutcome, replayed: Bool) {
        idempotent(\.activityLedger, key: idempotencyKey, digest: "vehicle:" + bodyDigest, keyReused: .keyReused, notFound: .notFound) { world in
            let isFault = report.kind != .batteryLow
            guard world.driver(id: driverId) != nil, report.observedAt.isFinite, !isFault || (report.code.map(Self.isFaultCode) ?? false),
                  report.voltage.map({ (0...36).contains($0) }) ?? true
            else { return .invalid("a fault needs its code (P, C, B or U and four characters), the voltage 0 to 36 V") }
            var log = world.activityLog ?? ActivityLog()
            log.list.vehicleEvents.append(.init(driverId: driverId, report: report, receivedAt: now))
            world.activityLog = log
            return .accepted(ReportAccepted(id: report.eventId, receivedAt: now))
        }
    }

    static func isFaultCode(_ code: String) -> Bool {
        let characters = Array(code)
        return characters.count == 5 && "PCBU".contains(characters[0]) && characters.dropFirst().allSatisfy { "0123456789ABCDEF".contains($0) }
    }
}
