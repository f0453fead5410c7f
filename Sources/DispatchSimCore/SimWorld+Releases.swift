import BackendContract
import DriverAPI
import DriverDomain

/// A unit's answer to a release, as the backend stored it (first copies).
public struct UpdateAckEntry: Codable, Sendable, Equatable {
    public var driverId: String
    public var ack: UpdateAck
    public var receivedAt: Double
}

/// Releases staged per driver's unit (the package bytes stay with the HTTP layer) and the units' answers;
/// optional in the world, so an older `--state` file still loads.
struct ReleaseLog: Codable, Sendable {
    var staged: [String: SignedRelease] = [:]
    var acks: [UpdateAckEntry] = []
    var ledger = IdempotencyLedger<ReportOutcome>()
}

extension SimWorld {
    /// What `GET /api/v1/rider/release` answers a driver's unit.
    public func release(driverId: String) -> ReleaseReply { ReleaseReply(release: releaseLog?.staged[driverId]) }

    public var updateAcks: [UpdateAckEntry] { releaseLog?.acks ?? [] }

    public var stagedReleases: [String: SignedRelease] { releaseLog?.staged ?? [:] }

    /// The fleet stages a release to some drivers' units: it replaces what was staged for them, and an
    /// `UPDATE_AVAILABLE` push tells each unit.
    public mutating func stageRelease(_ release: SignedRelease, driverIds: [String], now: Double) throws(SimRefusal) {
        for driverId in driverIds where driver(id: driverId) == nil { throw SimRefusal(.notFound, "no driver \(driverId)") }
        var log = releaseLog ?? ReleaseLog()
        for driverId in driverIds { log.staged[driverId] = release }
        releaseLog = log
        for driverId in driverIds { _ = push(.updateAvailable, driverId: driverId, now: now) }
    }

    var releaseLedger: IdempotencyLedger<ReportOutcome> {
        get { releaseLog?.ledger ?? IdempotencyLedger() }
        set {
            var log = releaseLog ?? ReleaseLog()
            log.ledger = newValue
            releaseLog = log
        }
    }

    public mutating func recordUpdateAck(
        _ ack: UpdateAck, driverId: String, idempotencyKey: String, bodyDigest: String, now: Double
    ) -> (outcome: ReportOutcome, replayed: Bool) {
        idempotent(\.releaseLedger, key: idempotencyKey, digest: "update-ack:" + bodyDigest, keyReused: .keyReused, notFound: .notFound) { world in
            guard world.driver(id: driverId) != nil, !ack.package.isEmpty, !ack.version.isEmpty, ack.at.isFinite else {
                return .invalid("package and version must not be empty and at a number")
            }
            var log = world.releaseLog ?? ReleaseLog()
            log.acks.append(UpdateAckEntry(driverId: driverId, ack: ack, receivedAt: now))
            world.releaseLog = log
            return .accepted(ReportAccepted(id: "\(ack.package)-\(ack.version)-\(ack.status.rawValue)", receivedAt: now))
        }
    }
}
