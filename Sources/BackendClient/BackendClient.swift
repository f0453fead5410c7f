import DriverAPI
import AsyncHTTPClient
import BackendContract
import CompressNIO
import Dispatch
import FoundationEssentials
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

/// The backend contract over HTTPS (async-http-client): the one type the daemon talks to the backend
/// through. TLS is verified against the system roots, or a CA file when one is configured; there is no
/// switch to turn verification off.
public final class BackendClient: Sendable {
    public let baseURL: String
    /// Replaced when the unit's identity changes (`present`).
    private let http: Mutex<HTTPClient>
    /// Presents no certificate, ever: the enrolment and the renewal go through it (a CSR proves the unit, and a
    /// certificate that expired while the unit was away must not fail the very handshake that renews it).
    private let plain: HTTPClient
    /// Told of every answer that this unit's certificate is revoked (the identity's owner keeps the status).
    private let revokedListener = Mutex<(@Sendable (BackendClientError) -> Void)?>(nil)
    private let successListener = Mutex<(@Sendable () -> Void)?>(nil)
    private let presentedListener = Mutex<(@Sendable () -> Void)?>(nil)
    private let caFile: String?
    private let timeout: TimeAmount
    /// Whether a connection stays open for the next request (60 s idle at most). A parked unit's requests close
    /// theirs instead: an idle connection closed later is a packet of its own, a radio waking a minute after the burst.
    private let keepsConnections = Atomic(true)
    /// How the backend's certificate is judged, and where the tunnels' sockets go (`judgeCertificates`); nil: by the
    /// system clock, as TLS does.
    private let judging = Mutex<(CertificateJudging, directory: String)?>(nil)
    /// The unit's TLS for the tunnel (its certificate once presented) and the anonymous one, made when first needed.
    private let tunnelTLS: Mutex<(identified: TLSConfiguration, contexts: [Bool: NIOSSLContext])>
    /// The tunnels by whether they present no certificate, opened when first needed.
    private let tunnels = Mutex<[Bool: Task<CertificateTunnel, any Error>]>([:])

    public init(baseURL: String, caFile: String? = nil, timeout: TimeAmount = .seconds(30)) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.caFile = caFile
        self.timeout = timeout
        let tls = ClientIdentity.anonymousTLS(caFile: caFile)
        http = Mutex(Self.makeHTTPClient(tls: tls, timeout: timeout))
        plain = Self.makeHTTPClient(tls: tls, timeout: timeout)
        tunnelTLS = Mutex((tls, [:]))
    }

    /// From now on, while `judging` does not leave it to the system clock, requests go through a `CertificateTunnel`
    /// whose socket is in `directory` (driverd's own), which judges the backend's certificate.
    public func judgeCertificates(_ judging: CertificateJudging, tunnelDirectory directory: String) {
        self.judging.withLock { $0 = (judging, directory) }
    }

    /// The backend's host, port and what `Host` says (nil: no https:// base with a host).
    private var endpoint: (host: String, port: Int, hostHeader: String)? {
        guard baseURL.hasPrefix("https://"), let url = URL(string: baseURL), let host = url.host else { return nil }
        return (host, url.port ?? 443, url.port.map { "\(host):\($0)" } ?? host)
    }

    /// The tunnel for requests that present the unit's certificate, or none (`anonymous`), when the certificate is
    /// not judged by the system clock now.
    private func tunnel(anonymous: Bool) async throws -> (CertificateTunnel, hostHeader: String)? {
        guard let (judging, directory) = judging.withLock({ $0 }), !judging.bySystemClock, let endpoint else { return nil }
        let opening = tunnels.withLock { tunnels in
            if let opening = tunnels[anonymous] { return opening }
            let opening = Task {
                try await CertificateTunnel.open(
                    socketPath: directory + (anonymous ? "/backend-tls-anonymous.sock" : "/backend-tls.sock"),
                    host: endpoint.host, port: endpoint.port, sslContext: { try self.tunnelContext(anonymous: anonymous) },
                    judging: judging)
            }
            tunnels[anonymous] = opening
            return opening
        }
        do {
            return (try await opening.value, endpoint.hostHeader)
        } catch {
            // The next request tries to open it again.
            tunnels.withLock { $0[anonymous] = nil }
            throw error
        }
    }

    private func tunnelContext(anonymous: Bool) throws -> NIOSSLContext {
        try tunnelTLS.withLock { tls in
            if let context = tls.contexts[anonymous] { return context }
            let context = try NIOSSLContext(configuration: anonymous ? ClientIdentity.anonymousTLS(caFile: caFile) : tls.identified)
            tls.contexts[anonymous] = context
            return context
        }
    }

    private static func makeHTTPClient(tls: TLSConfiguration, timeout: TimeAmount) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = tls
        configuration.timeout = .init(connect: .seconds(10), read: timeout)
        configuration.decompression = .enabled(limit: .ratio(20))
        // Two connections at most to the backend: the sender's and one for a long transfer (a photo, a release chunk)
        // beside it. Owners that call together after the link comes back queue on them instead of each opening a
        // connection of its own (each a handshake on the radio, and a new connection for a fleet's backend to admit).
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 2)
        // A connection that cannot be made fails the request: the uplink's backoff decides when to try again, not a
        // loop of the library's own inside one request (unseen retries during an outage, for every unit at once).
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// From now on every connection presents the unit's certificate (mutual TLS). Connections open without it are
    /// dropped: a request on its way meanwhile fails as a network error and goes again.
    public func present(_ identity: ClientIdentity) throws {
        let tls = try identity.tlsConfiguration(caFile: caFile)
        tunnelTLS.withLock { tunnelTLS in
            tunnelTLS.identified = tls
            tunnelTLS.contexts[false] = nil
        }
        let retired = http.withLock { current in
            defer { current = Self.makeHTTPClient(tls: tls, timeout: timeout) }
            return current
        }
        Task { await Self.shutDown(retired) }
        presentedListener.withLock { $0 }?()
    }

    /// `action` runs each time the client presents a new identity (enrolled, renewed).
    public func whenIdentityPresented(_ action: @escaping @Sendable () -> Void) { presentedListener.withLock { $0 = action } }

    /// `action` hears each answer `UNIT_REVOKED`, whichever call got it.
    public func whenUnitRevoked(_ action: @escaping @Sendable (BackendClientError) -> Void) { revokedListener.withLock { $0 = action } }

    /// `action` runs after each request the backend took (a 2xx): the backend is back, whoever asked.
    public func whenRequestSucceeds(_ action: @escaping @Sendable () -> Void) { successListener.withLock { $0 = action } }

    /// AsyncHTTPClient's `shutdown() async` answers on `DispatchQueue.global()`: the first job there starts libdispatch's
    /// worker pool, whose monitor wakes the process every second for good and runs on a thread that asks for nice -4
    /// (refused under the hardened unit: "Failed to set thread priority" in the journal). A queue of its own is served
    /// by an overcommit thread that exits when idle (docs/LEAN.md, "Wake-ups").
    private static let shutdownQueue = DispatchQueue(label: "driverd.backend-client.shutdown")

    private static func shutDown(_ client: HTTPClient) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            client.shutdown(queue: shutdownQueue) { _ in
                // An error means it was shut down already: the same end.
                done.resume()
            }
        }
    }

    /// Keep connections open between requests (moving: the next request soon) or close each after its answer
    /// (parked in battery-saver mode: its burst ends with the answer).
    public func keepConnections(_ keep: Bool) { keepsConnections.store(keep, ordering: .relaxed) }

    public func shutdown() async {
        await Self.shutDown(http.withLock { $0 })
        await Self.shutDown(plain)
        for opening in tunnels.withLock({ $0.values }) {
            do {
                try await opening.value.close()
            } catch {
                // Never opened: nothing to close.
            }
        }
    }

    /// Enrolment: the claim token and the unit's CSR; the answer is the unit's certificate chain.
    public func enrol(_ request: EnrolmentRequest) async throws(BackendClientError) -> IssuedCertificate {
        try await send(.POST, BackendPaths.enrol, json: request, anonymous: true)
    }

    /// Renewal: the unit's certificate and a CSR for the same key; the answer is the new chain.
    public func renew(_ request: RenewalRequest) async throws(BackendClientError) -> IssuedCertificate {
        try await send(.POST, BackendPaths.renew, json: request, anonymous: true)
    }

    public func login(username: String, password: String) async throws(BackendClientError) -> TokenResponse {
        try await send(.POST, BackendPaths.login, json: LoginRequest(username: username, password: password))
    }

    public func refresh(refreshToken: String) async throws(BackendClientError) -> TokenResponse {
        try await send(.POST, BackendPaths.refresh, json: RefreshRequest(refreshToken: refreshToken))
    }

    public func activeTasks(token: String) async throws(BackendClientError) -> ActiveTasks {
        try await send(.GET, BackendPaths.activeTasks, token: token)
    }

    /// A batch, gzipped when that saves anything worth it (the backend takes `Content-Encoding: gzip`).
    public func postLocations(_ batch: LocationBatch, token: String) async throws(BackendClientError) -> BatchAck {
        let body: Data
        do {
            body = Data(try Codec.encode(batch))
        } catch {
            throw BackendClientError(transport: error)
        }
        return try await sendCompressible(BackendPaths.locations, body: body, threshold: Self.gzipThreshold, token: token)
    }

    /// Batches smaller than this go as they are: at 1 Hz a batch is sent every few seconds, and the CPU is not worth it.
    static let gzipThreshold = 1024

    /// A POST whose body goes gzipped when it is at least `threshold` bytes and gzip saves more than the header costs.
    private func sendCompressible<Answer: Decodable>(
        _ path: String, body: Data, threshold: Int, token: String, idempotencyKey: String? = nil
    ) async throws(BackendClientError) -> Answer {
        guard body.count >= threshold, let compressed = Self.gzip(body), compressed.count + 64 < body.count else {
            return try await send(.POST, path, body: body, token: token, idempotencyKey: idempotencyKey)
        }
        return try await send(.POST, path, body: compressed, contentEncoding: "gzip", token: token, idempotencyKey: idempotencyKey)
    }

    static func gzip(_ data: Data) -> Data? {
        var buffer = ByteBuffer(bytes: data)
        // Not expected to fail (zlib on a buffer in memory); if it does, the body goes uncompressed.
        guard let compressed = try? buffer.compress(with: .gzip()) else { return nil }
        return Data(compressed.readableBytesView)
    }

    /// A status update whose body was encoded when it was queued (the replay must be the same request).
    public func patchStatus(taskId: String, body: Data, idempotencyKey: String, token: String) async throws(BackendClientError) -> StatusAccepted {
        try await send(.PATCH, BackendPaths.taskStatus(taskId), body: body, token: token, idempotencyKey: idempotencyKey)
    }

    public func postOTP(taskId: String, body: Data, idempotencyKey: String, token: String) async throws(BackendClientError) -> PODReceipt {
        try await send(.POST, BackendPaths.taskPOD(taskId), body: body, token: token, idempotencyKey: idempotencyKey)
    }

    public func eta(taskId: String, token: String) async throws(BackendClientError) -> ETAResponse {
        try await send(.GET, BackendPaths.taskETA(taskId), token: token)
    }

    /// A visit to a stop, encoded when it was queued; its id is the idempotency key.
    public func postVisit(body: Data, idempotencyKey: String, token: String) async throws(BackendClientError) -> ReportAccepted {
        try await send(.POST, BackendPaths.visits, body: body, token: token, idempotencyKey: idempotencyKey)
    }

    /// A finished trip or idle period, or a harsh driving event, encoded when it was queued; its id is the
    /// idempotency key.
    public func postActivity(path: String, body: Data, idempotencyKey: String, token: String) async throws(BackendClientError) -> ReportAccepted {
        try await send(.POST, path, body: body, token: token, idempotencyKey: idempotencyKey)
    }

    /// The unit's health report, encoded when it was queued; gzipped whatever its size (it is mostly key names: about
    /// 600 bytes of JSON go as about 400), as it goes twice an hour for years.
    public func postHealthReport(body: Data, idempotencyKey: String, token: String) async throws(BackendClientError) -> ReportAccepted {
        try await sendCompressible(BackendPaths.health, body: body, threshold: 0, token: token, idempotencyKey: idempotencyKey)
    }

    /// The driver's stop order, encoded when it was queued.
    public func putRoute(body: Data, token: String) async throws(BackendClientError) -> RouteSequence {
        try await send(.PUT, BackendPaths.route, body: body, token: token)
    }

    /// A photo proof as multipart/form-data, streamed in 64 KiB chunks; `progress(sent, total)` is called as
    /// the body goes out (total counts the whole multipart body).
    public func postPhoto(
        taskId: String, photo: Data, contentType: String, fields: [(String, String)], idempotencyKey: String, token: String,
        progress: @escaping @Sendable (Int, Int) -> Void
    ) async throws(BackendClientError) -> PODReceipt {
        let form = MultipartBody(fields: fields, file: (PhotoPart.photo, "photo", contentType, photo))
        return try await send(
            .POST, BackendPaths.taskPOD(taskId), body: form.data, contentType: form.contentType, token: token,
            idempotencyKey: idempotencyKey, progress: progress)
    }

    public func remoteConfig(token: String) async throws(BackendClientError) -> ConfigReply {
        try await send(.GET, BackendPaths.config, token: token)
    }

    public func release(token: String) async throws(BackendClientError) -> ReleaseReply {
        try await send(.GET, BackendPaths.release, token: token)
    }

    public func releaseChunk(sha256: String, index: Int, token: String) async throws(BackendClientError) -> Data {
        try await send(.GET, BackendPaths.releaseChunk(sha256, index: index), token: token) { $0 }
    }

    public func putDiagnosticChunk(
        requestId: String, index: Int, count: Int, sha256: String, bytes: Data, token: String
    ) async throws(BackendClientError) -> ChunkAccepted {
        try await send(
            .PUT, BackendPaths.diagnosticChunk(requestId, index: index, count: count, sha256: sha256), body: bytes,
            contentType: "application/octet-stream", token: token)
    }

    public func pushes(after: Int, token: String) async throws(BackendClientError) -> PushList {
        try await send(.GET, BackendPaths.pushes + "?after=\(after)", token: token)
    }

    private func send<Reply: Decodable>(
        _ method: HTTPMethod, _ path: String, json: some Encodable, token: String? = nil, anonymous: Bool = false
    ) async throws(BackendClientError) -> Reply {
        let body: Data
        do {
            body = Data(try Codec.encode(json))
        } catch {
            throw BackendClientError(transport: error)
        }
        return try await send(method, path, body: body, token: token, anonymous: anonymous)
    }

    private func send<Reply: Decodable>(
        _ method: HTTPMethod, _ path: String, body: Data? = nil, contentType: String = "application/json",
        contentEncoding: String? = nil, token: String? = nil, idempotencyKey: String? = nil,
        progress: (@Sendable (Int, Int) -> Void)? = nil, anonymous: Bool = false
    ) async throws(BackendClientError) -> Reply {
        try await send(
            method, path, body: body, contentType: contentType, contentEncoding: contentEncoding, token: token,
            idempotencyKey: idempotencyKey, progress: progress, anonymous: anonymous) { data in try Codec.decode(Reply.self, from: data) }
    }

    /// `decode` reads a 2xx answer's body (its errors are the transport's: the backend said something unreadable).
    private func send<Reply>(
        _ method: HTTPMethod, _ path: String, body: Data? = nil, contentType: String = "application/json",
        contentEncoding: String? = nil, token: String? = nil, idempotencyKey: String? = nil,
        progress: (@Sendable (Int, Int) -> Void)? = nil, anonymous: Bool = false, decode: (Data) throws -> Reply
    ) async throws(BackendClientError) -> Reply {
        let tunnel: (CertificateTunnel, hostHeader: String)?
        do {
            tunnel = try await self.tunnel(anonymous: anonymous)
        } catch {
            throw BackendClientError(transportReason: "the tunnel that judges the backend's certificate cannot open: \(error)")
        }
        var url = baseURL + path
        if let tunnel {
            guard let local = URL(httpURLWithSocketPath: tunnel.0.socketPath, uri: path) else {
                throw BackendClientError(transportReason: "no URL for the tunnel's socket \(tunnel.0.socketPath) and \(path)")
            }
            url = local.absoluteString
        }
        var request = HTTPClientRequest(url: url)
        if let tunnel { request.headers.add(name: "Host", value: tunnel.hostHeader) }
        request.method = method
        request.headers.add(name: "Accept", value: "application/json")
        if !keepsConnections.load(ordering: .relaxed) { request.headers.add(name: "Connection", value: "close") }
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let idempotencyKey { request.headers.add(name: BackendPaths.idempotencyKeyHeader, value: idempotencyKey) }
        if let body {
            request.headers.add(name: "Content-Type", value: contentType)
            if let contentEncoding { request.headers.add(name: "Content-Encoding", value: contentEncoding) }
            if let progress {
                request.body = .stream(ChunkedBody(data: body, progress: progress), length: .known(Int64(body.count)))
            } else {
                request.body = .bytes(ByteBuffer(bytes: body))
            }
        }
        let status: Int
        let bytes: ByteBuffer
        let retryAfter: Double?
        do {
            let response = try await (anonymous ? plain : http.withLock { $0 }).execute(request, timeout: timeout)
            status = Int(response.status.code)
            retryAfter = [429, 503].contains(status)
                ? RetryAfter.seconds(response.headers.first(name: "Retry-After"), responseDate: response.headers.first(name: "Date")) : nil
            bytes = try await response.body.collect(upTo: 16 << 20)
        } catch {
            // Through the tunnel the HTTP client sees only a closed connection: the tunnel knows why.
            if let failure = tunnel?.0.takeFailure() { throw BackendClientError(transportReason: failure) }
            throw BackendClientError(transport: error)
        }
        let data = Data(bytes.readableBytesView)
        guard (200..<300).contains(status) else {
            let error = BackendClientError(
                // A body of another shape (a proxy's page) is expected: the raw body is kept instead.
                status: status, rawBody: String(decoding: data, as: UTF8.self), body: try? Codec.decode(BackendErrorBody.self, from: data),
                retryAfter: retryAfter)
            if error.body?.error.code == .unitRevoked { revokedListener.withLock { $0 }?(error) }
            throw error
        }
        successListener.withLock { $0 }?()
        do {
            return try decode(data)
        } catch {
            throw BackendClientError(transport: error)
        }
    }
}
