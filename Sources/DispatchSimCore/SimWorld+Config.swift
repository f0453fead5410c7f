import BackendContract
import DriverAPI
import DriverDomain

/// A unit's answer to a configuration document, as the backend stored it (first copies).
public struct ConfigAckEntry: Codable, Sendable, Equatable {
    public var driverId: String
    public var ack: ConfigAck
    public var receivedAt: Double
}

/// Configuration documents per driver (signed by the HTTP layer) and the units' answers; optional in the world,
/// so an older `--state` file still loads.
struct ConfigLog: Codable, Sendable {
    var documents: [String: SignedConfig] = [:]
    var acks: [ConfigAckEntry] = []
    var ledger = IdempotencyLedger<ReportOutcome>()
}

extension SimWorld {
    /// What `GET /api/v1/rider/config` answers a driver's unit.
    public func remoteConfig(driverId: String) -> ConfigReply { ConfigReply(document: configLog?.documents[driverId]) }

    public var configAcks: [ConfigAckEntry] { configLog?.acks ?? [] }

    public var configDocuments: [String: SignedConfig] { configLog?.documents ?? [:] }

    /// The dispatcher publishes a document for a driver's unit: it replaces the previous one and a
    /// `CONFIG_UPDATE` push tells the unit.
    public mutating func publishConfig(_ document: SignedConfig, driverId: String, now: Double) throws(SimRefusal) {
        guard driver(id: driverId) != nil else { throw SimRefusal(.notFound, "no driver \(driverId)") }
        var log = configLog ?? ConfigLog()
        log.documents[driverId] = document
        configLog = log
        _ = push(.configUpdate, driverId: driverId, now: now)
    }

    var configLedger: IdempotencyLedger<ReportOutcome> {
        get { configLog?.ledger ?? IdempotencyLedger() }
        set {
            var log = configLog ?? ConfigLog()
            log.ledger = newValue
            configLog = log
        }
    }

    public mutating func recordConfigAck(
        _ ack: ConfigAck, driverId: String, idempotencyKey: String, bodyDigest: String, now: Double
    ) -> (outcome: ReportOutcome, replayed: Bool) {
        idempotent(\.configLedger, key: idempotencyKey, digest: "config-ack:" + bodyDigest, keyReused: .keyReused, notFound: .notFound) { world in
            guard world.driver(id: driverId) != nil, ack.version >= 0, ack.at.isFinite else {
                return .invalid("version must not be negative and at a number")
            }
            var log = world.configLog ?? ConfigLog()
            log.acks.append(ConfigAckEntry(driverId: driverId, ack: ack, receivedAt: now))
            world.configLog = log
            return .accepted(ReportAccepted(id: "config-v\(ack.version)", receivedAt: now))
        }
    }
}
