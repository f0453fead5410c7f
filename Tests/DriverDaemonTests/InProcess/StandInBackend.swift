import BackendClient
import BackendContract
import Crypto
import DispatchSimCore
import DriverAPI
import Foundation
import Synchronization

/// A backend inside the test process: the reference backend's own rules (`SimWorld`: idempotency, transitions,
/// OTP, batches, pushes) without HTTP. Tokens are plain strings that can be revoked, and transient failures can
/// be switched on, so the uplink's paths are all reachable in a unit test.
final class StandInBackend: BackendAPI {
    private struct State {
        var world = SimWorld(scenario: .builtIn)
        var tokens: [String: String] = [:]
        var issued = 0
        var down: String?
        var requests: [String] = []
        /// Whether a batch's carried batches are read (false: as a backend that predates the field, which it ignores).
        var takesCarried = true
        /// Location requests the link loses next: before the backend sees them (false) or after it stored them (true).
        var locationLosses: [Bool] = []
    }

    private let state = Mutex(State())
    let baseURL = "http://127.0.0.1:0"

    func shutdown() async {}

    /// No connections: every call is in process.
    func keepConnections(_ keep: Bool) {}

    /// The world as it stands (what was received).
    var world: SimWorld { state.withLock { $0.world } }
    var requests: [String] { state.withLock { $0.requests } }

    /// While set, every request fails as if the network were down.
    func setDown(_ reason: String?) { state.withLock { $0.down = reason } }

    /// `false`: location batches' carried batches are ignored, as by a backend that predates them.
    func takeCarried(_ takes: Bool) { state.withLock { $0.takesCarried = takes } }

    /// The next location requests are lost on the link, each before the backend sees it (`afterStoring` false) or
    /// with its answer (true).
    func loseLocationRequests(_ afterStoring: [Bool]) { state.withLock { $0.locationLosses += afterStoring } }

    /// Every token issued so far stops working (a 401 until the next login).
    func revokeTokens() { state.withLock { $0.tokens = [:] } }

    /// A dispatcher's action on the world (assign, cancel, message …).
    func dispatch<T>(_ change: (inout SimWorld, Double) -> T) -> T {
        state.withLock { state in change(&state.world, Date().timeIntervalSince1970) }
    }

    private func authorized<T>(_ name: String, _ token: String?, _ body: (inout SimWorld, String, Double) throws(BackendClientError) -> T) throws(BackendClientError) -> T {
        try state.withLock { state throws(BackendClientError) -> T in
            state.requests.append(name)
            if let down = state.down { throw BackendClientError(transportReason: down) }
            var driverId = ""
            if let token {
                guard let known = state.tokens[token] else { throw Self.error(.unauthorized, "unknown or revoked token") }
                driverId = known
            }
            return try body(&state.world, driverId, Date().timeIntervalSince1970)
        }
    }

    static func error(_ code: BackendErrorCode, _ message: String, task: RiderTask? = nil, attemptsLeft: Int? = nil) -> BackendClientError {
        let body = BackendErrorBody(.init(code: code, message: message, task: task, attemptsLeft: attemptsLeft))
        let raw = (try? JSONEncoder().encode(body)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        return BackendClientError(status: code.httpStatus, rawBody: raw, body: body)
    }

    private func issue(_ driverId: String) -> TokenResponse {
        state.withLock { state in
            state.issued += 1
            let access = "access-\(state.issued)", refresh = "refresh-\(state.issued)"
            state.tokens[access] = driverId
            state.tokens[refresh] = driverId
            return TokenResponse(accessToken: access, refreshToken: refresh, expiresIn: 3600, driverId: driverId)
        }
    }

    func login(username: String, password: String) async throws(BackendClientError) -> TokenResponse {
        let driver = try authorized("login", nil) { world, _, _ throws(BackendClientError) in
            guard let driver = world.driver(username: username, password: password) else {
                throw Self.error(.invalidCredentials, "unknown username or wrong password")
            }
            return driver
        }
        return issue(driver.id)
    }

    func refresh(refreshToken: String) async throws(BackendClientError) -> TokenResponse {
        issue(try authorized("refresh", refreshToken) { _, driverId, _ in driverId })
    }

    func activeTasks(token: String) async throws(BackendClientError) -> ActiveTasks {
        try authorized("activeTasks", token) { world, driverId, now in world.activeTasks(driverId: driverId, now: now) }
    }

    func postLocations(_ batch: LocationBatch, token: String) async throws(BackendClientError) -> BatchAck {
        let (takesCarried, loss) = state.withLock { state in (state.takesCarried, state.locationLosses.isEmpty ? nil : state.locationLosses.removeFirst()) }
        var batch = batch
        if !takesCarried { batch.carried = nil }
        if loss == false { throw BackendClientError(transportReason: "connection reset by peer (the link lost the request)", lost: true) }
        let ack = try authorized("postLocations", token) { world, driverId, now in world.ingest(batch: batch, driverId: driverId, now: now).ack }
        if loss == true { throw BackendClientError(transportReason: "connection reset by peer (the link lost the answer)", lost: true) }
        return ack
    }

    func patchStatus(taskId: String, body: Data, idempotencyKey: String, token: String) async throws(BackendClientError) -> StatusAccepted {
        guard let request = try? JSONDecoder().decode(StatusUpdateRequest.self, from: body) else { throw Self.error(.badRequest, "not a status update") }
        return try authorized("patchStatus", token) { world, driverId, now throws(BackendClientError) in
            let digest = taskId + "|" + String(decoding: body, as: UTF8.self)
            switch world.updateStatus(taskId: taskId, driverId: driverId, request: request, idempotencyKey: idempotencyKey, bodyDigest: digest, now: now).outcome {
            case .applied(let accepted): return accepted
            case .invalidTransition(let task): throw Self.error(.invalidTransition, "task \(taskId) is \(task.status.rawValue)", task: task)
            case .podRequired(let task): throw Self.error(.podRequired, "a proof first", task: task)
            case .keyReused: throw Self.error(.idempotencyKeyReused, "key reused")
            case .notFound: throw Self.error(.notFound, "no task \(taskId)")
            }
        }
    }

    func postOTP(taskId: String, body: Data, idempotencyKey: String, token: String) async throws(BackendClientError) -> PODReceipt {
        guard let submission = try? JSONDecoder().decode(OTPSubmission.self, from: body) else { throw Self.error(.badRequest, "not an OTP") }
        return try authorized("postOTP", token) { world, driverId, now throws(BackendClientError) in
            try Self.answer(world.submitOTP(taskId: taskId, driverId: driverId, value: submission.value, idempotencyKey: idempotencyKey, now: now).outcome)
        }
    }

    func eta(taskId: String, token: String) async throws(BackendClientError) -> ETAResponse {
        try authorized("eta", token) { world, driverId, now throws(BackendClientError) in
            guard let eta = world.eta(taskId: taskId, driverId: driverId, now: now) else { throw Self.error(.notFound, "no task \(taskId)") }
            return eta
        }
    }

    func putRoute(body: Data, token: String) async throws(BackendClientError) -> RouteSequence {
        guard let sequence = try? JSONDecoder().decode(RouteSequence.self, from: body) else { throw Self.error(.badRequest, "not a sequence") }
        return try authorized("putRoute", token) { world, driverId, now throws(BackendClientError) in
            switch world.resequence(driverId: driverId, to: sequence.sequence, byDispatcher: false, now: now) {
            case .success(let order): return RouteSequence(sequence: order)
            case .failure(let refusal): throw Self.error(.invalidSequence, "\(refusal)")
            }
        }
    }

    func postVisit(body: Data, idempotencyKey: String, token: String) async throws(BackendClientError) -> ReportAccepted {
        guard let report = try? JSONDecoder().decode(VisitReport.self, from: body) else { throw Self.error(.badRequest, "not a visit") }
        return try authorized("postVisit", token) { world, driverId, now throws(BackendClientError) in
            switch world.recordVisit(report, driverId: driverId, idempotencyKey: idempotencyKey, bodyDigest: String(decoding: body, as: UTF8.self), now: now).outcome {
            case .accepted(let accepted): return accepted
            case .invalid(let reason): throw Self.error(.badRequest, reason)
            case .keyReused: throw Self.error(.idempotencyKeyReused, "key reused")
            case .notFound: throw Self.error(.notFound, "no task \(report.taskId)")
            }
        }
    }

    func postHealthReport(body: Data, idempotencyKey: String, token: String) async throws(BackendClientError) -> ReportAccepted {
        try await postActivity(path: BackendPaths.health, body: body, idempotencyKey: idempotencyKey, token: token)
    }

    func postActivity(path: String, body: Data, idempotencyKey: String, token: String) async throws(BackendClientError) -> ReportAccepted {
        let digest = String(decoding: body, as: UTF8.self)
        return try authorized("postActivity", token) { world, driverId, now throws(BackendClientError) in
            let outcome: ReportOutcome
            if path == BackendPaths.trips, let trip = try? JSONDecoder().decode(TripReport.self, from: body) {
                outcome = world.recordTrip(trip, driverId: driverId, idempotencyKey: idempotencyKey, bodyDigest: digest, now: now).outcome
            } else if path == BackendPaths.health, let report = try? JSONDecoder().decode(UnitHealthReport.self, from: body) {
                outcome = world.recordHealth(report, driverId: driverId, idempotencyKey: idempotencyKey, bodyDigest: digest, now: now).outcome
            } else if path == BackendPaths.sos, let report = try? JSONDecoder().decode(SOSReport.self, from: body) {
                outcome = world.recordSOS(report, driverId: driverId, idempotencyKey: idempotencyKey, bodyDigest: digest, now: now).outcome
            } else if path == BackendPaths.vehicleEvents, let event = try? JSONDecoder().decode(VehicleEventReport.self, from: body) {
                outcome = world.recordVehicleEvent(event, driverId: driverId, idempotencyKey: idempotencyKey, bodyDigest: digest, now: now).outcome
            } else if let idle = try? JSONDecoder().decode(IdleReport.self, from: body) {
                outcome = world.recordIdle(idle, driverId: driverId, idempotencyKey: idempotencyKey, bodyDigest: digest, now: now).outcome
            } else {
                throw Self.error(.badRequest, "not a trip, idle or vehicle report")
            }
            switch outcome {
            case .accepted(let accepted): return accepted
            case .invalid(let reason): throw Self.error(.badRequest, reason)
            case .keyReused: throw Self.error(.idempotencyKeyReused, "key reused")
            case .notFound: throw Self.error(.notFound, "no driver")
            }
        }
    }

    func postPhoto(
        taskId: String, photo: Data, contentType: String, fields: [(String, String)], idempotencyKey: String, token: String,
        progress: @escaping @Sendable (Int, Int) -> Void
    ) async throws(BackendClientError) -> PODReceipt {
        progress(photo.count, photo.count)
        let timestamp = fields.first { $0.0 == PhotoPart.timestamp }.flatMap { Double($0.1) } ?? 0
        let proof = PhotoProof(sha256: "sha-\(photo.count)", bytes: photo.count, lat: nil, lng: nil, timestamp: timestamp)
        return try authorized("postPhoto", token) { world, driverId, now throws(BackendClientError) in
            try Self.answer(world.submitPhoto(taskId: taskId, driverId: driverId, photo: proof, idempotencyKey: idempotencyKey, now: now).outcome)
        }
    }

    func pushes(after: Int, token: String) async throws(BackendClientError) -> PushList {
        try authorized("pushes", token) { world, driverId, _ in PushList(pushes: world.pushes(driverId: driverId, after: after)) }
    }

    /// The in-process tests push no configuration.
    func remoteConfig(token: String) async throws(BackendClientError) -> ConfigReply { ConfigReply(document: nil) }

    func release(token: String) async throws(BackendClientError) -> ReleaseReply { ReleaseReply(release: nil) }

    /// The in-process tests stage no release: a chunk would be a test's mistake.
    func releaseChunk(sha256: String, index: Int, token: String) async throws(BackendClientError) -> Data {
        throw BackendClientError(transportReason: "the stand-in backend has no releases")
    }

    /// The in-process tests request no bundle: a chunk would be a test's mistake.
    func putDiagnosticChunk(requestId: String, index: Int, count: Int, sha256: String, bytes: Data, token: String) async throws(BackendClientError) -> ChunkAccepted {
        try authorized("diagnostic chunk", token) { world, driverId, _ throws(BackendClientError) in
            do throws(SimRefusal) {
                return try world.receiveChunk(
                    requestId: requestId, index: index, count: count, sha256: sha256, bytes: Array(bytes), driverId: driverId,
                    digest: { TextFormat.hex(SHA256.hash(data: $0)) })
            } catch {
                throw Self.error(error.code, error.message)
            }
        }
    }

    private static func answer(_ outcome: PODOutcome) throws(BackendClientError) -> PODReceipt {
        switch outcome {
        case .accepted(let receipt): return receipt
        case .otpWrong(let left): throw error(.otpInvalid, "wrong code", attemptsLeft: left)
        case .otpLocked: throw error(.otpLocked, "locked")
        case .typeMismatch(let task): throw error(.podTypeMismatch, "other proof type", task: task)
        case .notDeliverable(let task): throw error(.invalidTransition, "not deliverable", task: task)
        case .keyReused: throw error(.idempotencyKeyReused, "key reused")
        case .notFound: throw error(.notFound, "no task")
        }
    }
}
