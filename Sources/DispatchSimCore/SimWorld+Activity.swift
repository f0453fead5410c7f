import BackendContract
import DriverAPI
import DriverDomain

/// Trips and idle periods as the backend stored them (first copies), per kind (`GET /sim/activity`).
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

    public var trips: [Trip] = []
    public var idles: [Idle] = []
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

}

