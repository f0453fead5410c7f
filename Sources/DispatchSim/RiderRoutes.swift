import BackendContract
import Crypto
import DispatchSimCore
import DriverAPI
import Foundation
import Hummingbird

/// The driver's side of the contract (everything under /api/v1/rider, Bearer token required).
struct RiderRoutes {
    let state: SimState

    func add(to group: RouterGroup<SimContext>) {
        group.get("tasks/active") { _, context -> Response in
            let driverId = try context.requireDriver()
            return try SimJSON.response(await state.read { world, now in world.activeTasks(driverId: driverId, now: now) })
        }
        group.patch("tasks/:taskId/status") { request, context in try await updateStatus(request, context) }
        group.post("visits") { request, context in
            try await recordReport(request, context, VisitReport.self) { $0.recordVisit($1, driverId: $2, idempotencyKey: $3, bodyDigest: $4, now: $5) }
        }
        group.post("trips") { request, context in
            try await recordReport(request, context, TripReport.self) { $0.recordTrip($1, driverId: $2, idempotencyKey: $3, bodyDigest: $4, now: $5) }
        }
        group.post("idles") { request, context in
            try await recordReport(request, context, IdleReport.self) { $0.recordIdle($1, driverId: $2, idempotencyKey: $3, bodyDigest: $4, now: $5) }
        }
        group.post("harsh-events") { request, context in
            try await recordReport(request, context, HarshEventReport.self) { $0.recordHarsh($1, driverId: $2, idempotencyKey: $3, bodyDigest: $4, now: $5) }
        }
        group.post("vehicle-events") { request, context in
            try await recordReport(request, context, VehicleEventReport.self) { $0.recordVehicleEvent($1, driverId: $2, idempotencyKey: $3, bodyDigest: $4, now: $5) }
        }
        group.post("health") { request, context in
            // The body's size as it came (gzipped or not), for the bench's bytes an hour.
            let wireBytes = request.headers[.contentLength].flatMap { Int($0) } ?? 0
            return try await recordReport(request, context, UnitHealthReport.self) {
                $0.recordHealth($1, driverId: $2, idempotencyKey: $3, bodyDigest: $4, wireBytes: wireBytes, now: $5)
            }
        }
        group.get("config") { _, context -> Response in
            let driverId = try context.requireDriver()
            return try SimJSON.response(await state.read { world, _ in world.remoteConfig(driverId: driverId) })
        }
        group.post("config/acks") { request, context in
            try await recordReport(request, context, ConfigAck.self) { $0.recordConfigAck($1, driverId: $2, idempotencyKey: $3, bodyDigest: $4, now: $5) }
        }
        group.post("requests/acks") { request, context in
            try await recordReport(request, context, FleetRequestAck.self) { $0.recordRequestAck($1, driverId: $2, idempotencyKey: $3, bodyDigest: $4, now: $5) }
        }
        group.put("diagnostics/:requestId/chunks/:index") { request, context -> Response in
            let driverId = try context.requireDriver()
            let requestId = try context.parameters.require("requestId")
            guard let index = Int(try context.parameters.require("index")),
                  let count = request.uri.queryParameters.get("count").flatMap({ Int($0) }),
                  let sha256 = request.uri.queryParameters.get("sha256")
            else { throw SimHTTPError(.badRequest, "the path's index and the query's count and sha256 are required") }
            let body = try await SimJSON.body(of: request, limit: 1 << 20)
            let bytes = Array(body.readableBytesView)
            let accepted = try await state.change { world, _ in
                try world.receiveChunk(
                    requestId: requestId, index: index, count: count, sha256: sha256, bytes: bytes, driverId: driverId,
                    digest: { SHA256.hash(data: $0).hexString })
            }
            return try SimJSON.response(accepted)
        }
        group.post("sos") { request, context in
            try await recordReport(request, context, SOSReport.self) { $0.recordSOS($1, driverId: $2, idempotencyKey: $3, bodyDigest: $4, now: $5) }
        }
        group.get("tasks/:taskId/eta") { _, context -> Response in
            let driverId = try context.requireDriver()
            let taskId = try context.parameters.require("taskId")
            guard let eta = await state.read({ world, now in world.eta(taskId: taskId, driverId: driverId, now: now) }) else {
                throw SimHTTPError(.notFound, "no task \(taskId)")
            }
            return try SimJSON.response(eta)
        }
        group.post("locations") { request, context -> Response in
            let driverId = try context.requireDriver()
            let batch = try await SimJSON.decode(LocationBatch.self, from: request, limit: LocationBatch.maxBytes)
            try Self.validate(batch)
            let ack = try await state.change { world, now in world.ingest(batch: batch, driverId: driverId, now: now).ack }
            return try SimJSON.response(ack)
        }
        group.get("pushes") { request, context -> Response in
            let driverId = try context.requireDriver()
            let afterText = request.uri.queryParameters.get("after") ?? "0"
            guard let after = Int(afterText), after >= 0 else { throw SimHTTPError(.badRequest, "after must be a push id (0 or more)") }
            return try SimJSON.response(PushList(pushes: await state.read { world, _ in world.pushes(driverId: driverId, after: after) }))
        }
        group.put("route") { request, context -> Response in
            let driverId = try context.requireDriver()
            let body = try await SimJSON.decode(RouteSequence.self, from: request)
            let result = try await state.change { world, now in world.resequence(driverId: driverId, to: body.sequence, byDispatcher: false, now: now) }
            switch result {
            case .success(let sequence): return try SimJSON.response(RouteSequence(sequence: sequence))
            case .failure(let refusal): throw SimHTTPError(refusal)
            }
        }
    }

    static func validate(_ batch: LocationBatch) throws {
        guard !batch.batchId.isEmpty, batch.batchId.utf8.count <= 128 else { throw SimHTTPError(.badRequest, "batchId must be 1 to 128 characters") }
        guard !batch.pings.isEmpty || batch.heartbeat != nil else {
            throw SimHTTPError(.badRequest, "a batch holds at least one ping, or a heartbeat")
        }
        if let heartbeat = batch.heartbeat, !heartbeat.timestamp.isFinite || !["noFix", "lost", "connected"].contains(heartbeat.gps) {
            throw SimHTTPError(.badRequest, "heartbeat: timestamp must be a number and gps one of connected, noFix, lost")
        }
        let carried = batch.carried ?? []
        for earlier in carried {
            guard !earlier.pings.isEmpty, earlier.heartbeat == nil, earlier.carried == nil else {
                throw SimHTTPError(.badRequest, "a carried batch holds pings and nothing else (no heartbeat, no carried batches)")
            }
            try validate(earlier)
        }
        guard batch.pings.count + carried.reduce(0, { $0 + $1.pings.count }) <= LocationBatch.maxPings else {
            throw SimHTTPError(.payloadTooLarge, "a request holds at most \(LocationBatch.maxPings) pings, carried batches included")
        }
        for ping in batch.pings where !(-90...90).contains(ping.lat) || !(-180...180).contains(ping.lng) || !ping.timestamp.isFinite {
            throw SimHTTPError(.badRequest, "a ping's lat, lng or timestamp is out of range")
        }
    }

    private func updateStatus(_ request: Request, _ context: SimContext) async throws -> Response {
        let driverId = try context.requireDriver()
        let taskId = try context.parameters.require("taskId")
        guard let key = request.headers[.idempotencyKey], !key.isEmpty, key.utf8.count <= 128 else {
            throw SimHTTPError(.idempotencyKeyMissing, "an Idempotency-Key header (1 to 128 characters) is required")
        }
        let body = try await SimJSON.decode(StatusUpdateRequest.self, from: request)
        if body.status == .deliveryFailed && body.reason == nil {
            throw SimHTTPError(.badRequest, "DELIVERY_FAILED needs a reason")
        }
        // The digest names the request, not its bytes: the same update with other whitespace is a replay.
        let canonical = try SimJSON.encoder.encode(body)
        let digest = SHA256.hash(data: Data(taskId.utf8) + [0] + canonical).hexString
        let (outcome, replayed) = try await state.change { world, now in
            world.updateStatus(taskId: taskId, driverId: driverId, request: body, idempotencyKey: key, bodyDigest: digest, now: now)
        }
        switch outcome {
        case .applied(let accepted):
            return try SimJSON.response(accepted, headers: replayed ? SimHTTPError.replayHeaders : [:])
        case .invalidTransition(let task):
            throw SimHTTPError(
                .invalidTransition, "task \(taskId) is \(task.status.rawValue); it cannot become \(body.status.rawValue)",
                task: task, replayed: replayed)
        case .podRequired(let task):
            throw SimHTTPError(
                .podRequired, "task \(taskId) needs an accepted proof of delivery before DELIVERED", task: task, replayed: replayed)
        case .keyReused:
            throw SimHTTPError(.idempotencyKeyReused, "this Idempotency-Key was used with another request")
        case .notFound:
            throw SimHTTPError(.notFound, "no task \(taskId)")
        }
    }
}

extension RiderRoutes {
    typealias Recorder<Report> = @Sendable (inout SimWorld, Report, _ driverId: String, _ key: String, _ digest: String, _ now: Double)
        -> (outcome: ReportOutcome, replayed: Bool)

    /// A visit, trip or idle report under its idempotency key: stored once, a replay answered as the first time.
    func recordReport<Report: Codable & Sendable>(
        _ request: Request, _ context: SimContext, _ type: Report.Type, _ record: @escaping Recorder<Report>
    ) async throws -> Response {
        let driverId = try context.requireDriver()
        guard let key = request.headers[.idempotencyKey], !key.isEmpty, key.utf8.count <= 128 else {
            throw SimHTTPError(.idempotencyKeyMissing, "an Idempotency-Key header (1 to 128 characters) is required")
        }
        let body = try await SimJSON.decode(Report.self, from: request)
        let digest = SHA256.hash(data: try SimJSON.encoder.encode(body)).hexString
        let (outcome, replayed) = try await state.change { world, now in record(&world, body, driverId, key, digest, now) }
        switch outcome {
        case .accepted(let accepted): return try SimJSON.response(accepted, headers: replayed ? SimHTTPError.replayHeaders : [:])
        case .invalid(let reason): throw SimHTTPError(.badRequest, reason)
        case .keyReused: throw SimHTTPError(.idempotencyKeyReused, "this Idempotency-Key was used with another request")
        case .notFound: throw SimHTTPError(.notFound, "no such task for this driver")
        }
    }
}

extension Digest {
    var hexString: String { TextFormat.hex(self) }
}
