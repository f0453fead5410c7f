import BackendContract
import FoundationEssentials

/// The backend contract as the daemon calls it: `BackendClient` over HTTPS, or a test's stand-in. Every
/// failure is a `BackendClientError`, sorted into transient, unauthorized and refused.
public protocol BackendAPI: Sendable {
    var baseURL: String { get }
    func shutdown() async
    /// Keep connections open between requests, or close each after its answer (a parked unit's burst ends there).
    func keepConnections(_ keep: Bool)
    func login(username: String, password: String) async throws(BackendClientError) -> TokenResponse
    func refresh(refreshToken: String) async throws(BackendClientError) -> TokenResponse
    func activeTasks(token: String) async throws(BackendClientError) -> ActiveTasks
    func postLocations(_ batch: LocationBatch, token: String) async throws(BackendClientError) -> BatchAck
    func patchStatus(taskId: String, body: Data, idempotencyKey: String, token: String) async throws(BackendClientError) -> StatusAccepted
    func postOTP(taskId: String, body: Data, idempotencyKey: String, token: String) async throws(BackendClientError) -> PODReceipt
    func eta(taskId: String, token: String) async throws(BackendClientError) -> ETAResponse
    func putRoute(body: Data, token: String) async throws(BackendClientError) -> RouteSequence
    func postVisit(body: Data, idempotencyKey: String, token: String) async throws(BackendClientError) -> ReportAccepted
    /// `BackendPaths.trips`, `.idles`, `.harshEvents`, `.sos`, `.configAcks` or `.releaseAcks`.
    func postActivity(path: String, body: Data, idempotencyKey: String, token: String) async throws(BackendClientError) -> ReportAccepted
    func postHealthReport(body: Data, idempotencyKey: String, token: String) async throws(BackendClientError) -> ReportAccepted
    func postPhoto(
        taskId: String, photo: Data, contentType: String, fields: [(String, String)], idempotencyKey: String, token: String,
        progress: @escaping @Sendable (Int, Int) -> Void
    ) async throws(BackendClientError) -> PODReceipt
    func pushes(after: Int, token: String) async throws(BackendClientError) -> PushList
    /// The fleet's configuration document for this unit (`GET /api/v1/rider/config`).
    func remoteConfig(token: String) async throws(BackendClientError) -> ConfigReply
    /// The release staged for this unit (`GET /api/v1/rider/release`).
    func release(token: String) async throws(BackendClientError) -> ReleaseReply
    /// One chunk of a release's package, its bytes as they are.
    func releaseChunk(sha256: String, index: Int, token: String) async throws(BackendClientError) -> Data
    /// One chunk of a requested diagnostic bundle; the same chunk again is stored once.
    func putDiagnosticChunk(requestId: String, index: Int, count: Int, sha256: String, bytes: Data, token: String) async throws(BackendClientError) -> ChunkAccepted
}

extension BackendClient: BackendAPI {}
