import DriverAPI
import BackendContract
import FoundationEssentials
import HTTPTypes
import Logging
import NIOCore
import NIOSSL
import NIOWebSocket
import Synchronization
import WSClient
import WSCompression

/// The backend's WebSocket (`/api/v1/rider/ws`): location batches up with their acks down, and pushes down.
/// `run` holds one connection until it closes; `send` uses it while it is open. Lock-guarded; the lock is never
/// held across a write or a wait.
public final class WebSocketLink: Sendable {
    private struct State {
        var outbound: WebSocketOutboundWriter?
        var waiters: [String: CheckedContinuation<BatchAck, any Error>] = [:]
        /// Set by `close`: a connection that opens afterwards is closed at once.
        var closing = false
        /// Ends the current `run` early (a connect that hangs, or `close` before the socket opened).
        var finishRun: (@Sendable (Result<Void, any Error>) -> Void)?
        /// Bumped by each `run`: a connection of an earlier run that opens late closes itself.
        var generation = 0
        /// Connections that opened (the upgrade done), since the start.
        var opened = 0
        /// When a frame last went or came on the open connection: the keepalive goes only after `keepalive` of quiet.
        var lastTraffic = ContinuousClock.now
    }

    public let url: String
    /// Where the handshake goes: the backend's host and port, and what `Host` says.
    private let endpoint: (host: String, port: Int, hostHeader: String)?
    /// The keepalive goes after this much quiet only, so a link that carries batches never sends one: a cellular
    /// radio wakes for any packet, and a keepalive on its own clock is a waking of its own.
    private let keepalive: Duration
    /// Replaced when the unit's identity changes (`present`); nil on loopback http://.
    /// wss:// (TLS) rather than loopback ws://.
    private let secure: Bool
    private let caFile: String?
    /// Made once (it reads the CA file) and again when the unit's identity changes (`present`), not per connection.
    private let sslContext = Mutex<NIOSSLContext?>(nil)
    /// How the backend's certificate is judged (`judgeCertificates`); nil: by TLS on the system clock.
    private let judging = Mutex<CertificateJudging?>(nil)
    private let logger: Logger
    private let state = Mutex(State())

    /// `baseURL` is the backend's https:// (or loopback http://) base as `BackendClient.baseURL` has it (no
    /// trailing slash); the WebSocket is wss:// (ws://) beside it.
    public init(baseURL base: String, caFile: String?, keepalive: Duration = .seconds(600), logger: Logger) {
        self.keepalive = keepalive
        let secure = base.hasPrefix("https://")
        url = (secure ? "wss://" + base.dropFirst("https://".count) : "ws://" + base.dropFirst("http://".count)) + BackendPaths.webSocket
        endpoint = URL(string: base).flatMap { url in
            url.host.map { host in (host, url.port ?? (secure ? 443 : 80), url.port.map { "\(host):\($0)" } ?? host) }
        }
        self.secure = secure
        self.caFile = caFile
        self.logger = logger
    }

    public var isConnected: Bool { state.withLock { $0.outbound != nil } }

    /// How many connections have opened since the start: whether a `run` connected at all, however it ended.
    public var openedConnections: Int { state.withLock { $0.opened } }

    /// The next connection presents the unit's certificate (mutual TLS); on loopback http:// there is no TLS to present it in.
    public func present(_ identity: ClientIdentity) throws {
        guard secure else { return }
        let context = try NIOSSLContext(configuration: try identity.tlsConfiguration(caFile: caFile))
        sslContext.withLock { $0 = context }
    }

    /// From now on the backend's certificate is judged as `judging` says (the same as `BackendClient.judgeCertificates`).
    public func judgeCertificates(_ judging: CertificateJudging) {
        self.judging.withLock { $0 = judging }
    }

    /// nil on loopback ws://.
    private func tlsContext() throws -> NIOSSLContext? {
        guard secure else { return nil }
        if let context = sslContext.withLock({ $0 }) { return context }
        let context = try NIOSSLContext(configuration: ClientIdentity.anonymousTLS(caFile: caFile))
        // A `present` meanwhile wins.
        return sslContext.withLock { current in
            if let current { return current }
            current = context
            return context
        }
    }

    /// Connects with the last push id seen (the backend's catch-up starts with the upgrade; one that does not say so
    /// hears a `hello`), and serves the connection until it closes: acks go
    /// to their senders, pushes to `onPush`. Returns when the server closes it; throws when it cannot connect.
    public func run(
        token: String, lastPushId: Int, connectTimeout: Duration = .seconds(15), onPush: @escaping @Sendable (Push) async -> Void
    ) async throws {
        // permessage-deflate, when the backend agrees: batches of JSON pings compress several times over.
        var configuration = WebSocketClientConfiguration(
            maxFrameSize: LocationBatch.maxBytes + 4096,
            extensions: [.perMessageDeflate(maxDecompressedFrameSize: 1 << 20)])
        configuration.additionalHeaders = [.authorization: "Bearer \(token)"]
        guard let endpoint else { throw BackendClientError(transportReason: "the WebSocket's address \(url) has no host") }
        let generation = state.withLock { state -> Int in
            state.generation += 1
            return state.generation
        }
        defer { disconnected(generation) }
        let upgrade = WebSocketUpgrade(
            host: endpoint.hostHeader, path: BackendPaths.webSocket(lastPushId: lastPushId), configuration: configuration,
            sslContext: try tlsContext(), judging: judging.withLock { $0 }) { inbound, outbound, context in
                try await self.serve(
                    inbound: inbound, outbound: outbound, generation: generation, hello: context.catchUpStarted ? nil : lastPushId, onPush: onPush)
            }
        let connection = ClientConnection(upgrade, address: .hostname(endpoint.host, port: endpoint.port), logger: logger)
        // The client library does not always notice a connection closed during the upgrade, and its connect
        // cannot be cancelled: it runs on its own, and this waits for it, a connect timeout, or `close`.
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let finished = Mutex(false)
            let finish: @Sendable (Result<Void, any Error>) -> Void = { result in
                guard finished.withLock({ done in defer { done = true }; return !done }) else { return }
                continuation.resume(with: result)
            }
            state.withLock { $0.finishRun = finish }
            Task {
                do {
                    try await connection.run()
                    finish(.success(()))
                } catch {
                    finish(.failure(error))
                }
            }
            Task {
                try? await EventLoopSleep.sleep(for: connectTimeout)  // cancelled only with the run it guards
                if !self.isConnected { finish(.failure(BackendClientError(transportReason: "the WebSocket did not open within \(connectTimeout)"))) }
            }
        }
    }

    private func serve(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, generation: Int, hello lastPushId: Int?,
        onPush: @escaping @Sendable (Push) async -> Void
    ) async throws {
        let closing = state.withLock { state -> Bool in
            let stale = state.closing || state.generation != generation
            if !stale {
                state.outbound = outbound
                state.opened += 1
            }
            return stale
        }
        if closing {
            try await outbound.close(.goingAway, reason: "driverd stopping")
            return
        }
        if let lastPushId { try await outbound.write(.text(try Self.text(.hello(lastPushId: lastPushId)))) }
        noteTraffic()
        let keepingAlive = Task { await keepAlive(outbound) }
        defer { keepingAlive.cancel() }
        for try await message in inbound.messages(maxSize: 1 << 20) {
            noteTraffic()
            // A frame of a kind this release does not know is expected from a newer backend: passed over.
            guard case .text(let text) = message,
                  let frame = try? Codec.decode(WSServerMessage.self, from: Data(text.utf8))
            else { continue }
            switch frame {
            case .ack(let ack):
                state.withLock { $0.waiters.removeValue(forKey: ack.batchId) }?.resume(returning: ack)
            case .push(let push):
                await onPush(push)
            case .error(let detail):
                logger.warning("the backend refused a WebSocket frame", metadata: ["code": "\(detail.code.rawValue)"])
            }
        }
    }

    private func noteTraffic() { state.withLock { $0.lastTraffic = .now } }

    /// A ping after `keepalive` without a frame either way, so a carrier's NAT keeps the connection's mapping. A mapping
    /// the NAT forgot answers the ping with a reset: the connection ends and `run`'s caller connects again (the
    /// backend then sends the pushes after the last one seen).
    private func keepAlive(_ outbound: WebSocketOutboundWriter) async {
        while !Task.isCancelled {
            let quiet = ContinuousClock.now - state.withLock { $0.lastTraffic }
            guard quiet >= keepalive else {
                do {
                    try await EventLoopSleep.sleep(for: keepalive - quiet)
                } catch {
                    return  // cancelled: the connection ended
                }
                continue
            }
            do {
                try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer())))
            } catch {
                logger.debug("WebSocket keepalive not sent", metadata: ["error": "\(error)"])
                return
            }
            noteTraffic()
        }
    }

    /// Sends a batch and waits for its ack. Throws a transient error when the socket is not open (the caller sends the
    /// batch over HTTPS), and a lost one (`isLostRequest`) when it closes with the frame sent or the ack does not come
    /// within `timeout`: the frame may have arrived, so the batch goes again under its id.
    public func send(_ batch: LocationBatch, timeout: Duration = .seconds(10)) async throws(BackendClientError) -> BatchAck {
        guard let outbound = state.withLock({ $0.outbound }) else { throw BackendClientError(transportReason: "the WebSocket is not open") }
        let text: String
        do {
            text = try Self.text(.locations(batch))
        } catch {
            throw BackendClientError(transportReason: "the batch cannot be encoded: \(error)")
        }
        let id = batch.batchId
        do {
            return try await withThrowingTaskGroup(of: BatchAck?.self) { group in
                group.addTask {
                    try await withCheckedThrowingContinuation { continuation in
                        self.state.withLock { $0.waiters[id] = continuation }
                        Task {
                            do {
                                try await outbound.write(.text(text))
                                self.noteTraffic()
                            } catch {
                                self.fail(id, error)
                            }
                        }
                    }
                }
                group.addTask {
                    // The waiter is resumed here, so the first task always ends.
                    try? await EventLoopSleep.sleep(for: timeout)
                    self.fail(id, BackendClientError(transportReason: "no ack within \(timeout)", lost: true))
                    return nil
                }
                defer { group.cancelAll() }
                while let result = try await group.next() {
                    if let ack = result { return ack }
                }
                throw BackendClientError(transportReason: "no ack")
            }
        } catch let error as BackendClientError {
            throw error
        } catch {
            throw BackendClientError(transport: error)
        }
    }

    private func fail(_ batchId: String, _ error: any Error) {
        state.withLock { $0.waiters.removeValue(forKey: batchId) }?.resume(throwing: error)
    }

    /// Closes the connection (shutdown); `run` then returns.
    public func close() {
        let (outbound, finish) = state.withLock { state in
            state.closing = true
            return (state.outbound, state.finishRun)
        }
        finish?(.failure(CancellationError()))
        // A close that fails finds the socket closed already: the same end.
        if let outbound { Task { try? await outbound.close(.goingAway, reason: "driverd stopping") } }
    }

    /// Ends the current connection (a logout) and lets `run` connect again later.
    public func disconnect() {
        let (outbound, finish) = state.withLock { ($0.outbound, $0.finishRun) }
        finish?(.failure(CancellationError()))
        // A close that fails finds the socket closed already: the same end.
        if let outbound { Task { try? await outbound.close(.normalClosure, reason: "logged out") } }
    }

    private func disconnected(_ generation: Int) {
        let waiters = state.withLock { state -> [CheckedContinuation<BatchAck, any Error>] in
            guard state.generation == generation else { return [] }
            state.outbound = nil
            state.finishRun = nil
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(throwing: BackendClientError(transportReason: "the WebSocket closed with the frame unacked", lost: true)) }
    }

    /// A frame's text; throws rather than send an empty frame.
    static func text(_ message: WSClientMessage) throws -> String {
        String(decoding: try Codec.encode(message), as: UTF8.self)
    }
}
