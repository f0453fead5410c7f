import BackendContract
import DriverAPI
import DriverDomain

/// A unit's answer to a fleet request, as the backend stored it (first copies).
public struct FleetAckEntry: Codable, Sendable, Equatable {
    public var driverId: String
    public var ack: FleetRequestAck
    public var receivedAt: Double
}

/// A diagnostic bundle as its chunks arrive.
public struct BundleUpload: Codable, Sendable, Equatable {
    public var requestId: String
    public var driverId: String
    public var count: Int
    public var sha256: String
    public var chunks: [Int: [UInt8]] = [:]
    /// Chunks that came again (a resend after a lost answer or a crash), stored once.
    public var duplicates = 0
    /// All chunks in and their bytes hash to `sha256`.
    public var complete = false
    public var checksumMismatch = false

    public var bytes: [UInt8] { (0..<count).flatMap { chunks[$0] ?? [] } }
}

/// Requests to units and what came back; optional in the world, so an older `--state` file still loads.
struct FleetLog: Codable, Sendable {
    var requests: [FleetRequest] = []
    var acks: [FleetAckEntry] = []
    var uploads: [String: BundleUpload] = [:]
    var ledger = IdempotencyLedger<ReportOutcome>()
}

/// `GET /sim/requests`: the requests sent, the answers, each upload's progress (without its bytes).
public struct FleetOverview: Codable, Sendable, Equatable {
    public struct Upload: Codable, Sendable, Equatable {
        public var requestId: String
        public var count: Int
        public var received: Int
        public var bytes: Int
        public var duplicates: Int
        public var complete: Bool
        public var checksumMismatch: Bool
    }

    public var requests: [FleetRequest]
    public var acks: [FleetAckEntry]
    public var uploads: [Upload]
}

extension SimWorld {
    public var fleetOverview: FleetOverview {
        let log = fleetLog ?? FleetLog()
        return FleetOverview(
            requests: log.requests, acks: log.acks,
            uploads: log.uploads.values.sorted { $0.requestId < $1.requestId }.map {
                .init(requestId: $0.requestId, count: $0.count, received: $0.chunks.count, bytes: $0.chunks.values.map(\.count).reduce(0, +),
                      duplicates: $0.duplicates, complete: $0.complete, checksumMismatch: $0.checksumMismatch)
            })
    }

    public func bundle(requestId: String) -> BundleUpload? { fleetLog?.uploads[requestId] }

    /// The dispatcher asks a driver's unit for something: a `FLEET_REQUEST` push carries it.
    public mutating func sendRequest(_ request: FleetRequest, driverId: String, now: Double) throws(SimRefusal) {
        guard driver(id: driverId) != nil else { throw SimRefusal(.notFound, "no driver \(driverId)") }
        guard BackendPaths.isValidTaskID(request.requestId) else {
            throw SimRefusal(.badRequest, "requestId: 1 to 64 letters, digits, '.', '_' or '-'")
        }
        var log = fleetLog ?? FleetLog()
        log.requests.append(request)
        fleetLog = log
        _ = push(.fleetRequest, driverId: driverId, request: request, now: now)
    }

    var fleetLedger: IdempotencyLedger<ReportOutcome> {
        get { fleetLog?.ledger ?? IdempotencyLedger() }
        set {
            var log = fleetLog ?? FleetLog()
            log.ledger = newValue
            fleetLog = log
        }
    }

    public mutating func recordRequestAck(
        _ ack: FleetRequestAck, driverId: String, idempotencyKey: String, bodyDigest: String, now: Double
    ) -> (outcome: ReportOutcome, replayed: Bool) {
        idempotent(\.fleetLedger, key: idempotencyKey, digest: "request-ack:" + bodyDigest, keyReused: .keyReused, notFound: .notFound) { world in
            guard world.driver(id: driverId) != nil, ack.at.isFinite else { return .invalid("at must be a number") }
            var log = world.fleetLog ?? FleetLog()
            log.acks.append(FleetAckEntry(driverId: driverId, ack: ack, receivedAt: now))
            world.fleetLog = log
            return .accepted(ReportAccepted(id: ack.requestId, receivedAt: now))
        }
    }

    /// A chunk of a bundle; the same chunk again is stored once. `sha256` checks the whole once all are in.
    public mutating func receiveChunk(
        requestId: String, index: Int, count: Int, sha256: String, bytes: [UInt8], driverId: String, digest: ([UInt8]) -> String
    ) throws(SimRefusal) -> ChunkAccepted {
        guard count >= 1, count <= 100_000, (0..<count).contains(index), sha256.count == 64 else {
            throw SimRefusal(.badRequest, "index must be below count (1 to 100000), sha256 64 hex digits")
        }
        var log = fleetLog ?? FleetLog()
        var upload = log.uploads[requestId] ?? BundleUpload(requestId: requestId, driverId: driverId, count: count, sha256: sha256.lowercased())
        guard upload.driverId == driverId, upload.count == count, upload.sha256 == sha256.lowercased() else {
            throw SimRefusal(.idempotencyKeyReused, "this request's upload was begun with another count or sha256")
        }
        if let stored = upload.chunks[index] {
            guard stored == bytes else { throw SimRefusal(.idempotencyKeyReused, "chunk \(index) came before with other bytes") }
            upload.duplicates += 1
        } else {
            upload.chunks[index] = bytes
        }
        if upload.chunks.count == count, !upload.complete {
            let matches = digest(upload.bytes) == upload.sha256
            upload.complete = matches
            upload.checksumMismatch = !matches
        }
        log.uploads[requestId] = upload
        fleetLog = log
        return ChunkAccepted(requestId: requestId, index: index, received: upload.chunks.count, complete: upload.complete)
    }
}
