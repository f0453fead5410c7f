import BackendClient
import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import Foundation
import JSONRPC
import Logging
import Synchronization

/// Sends the outbox to the backend: transitions and proofs of delivery first (in order per task), then pings
/// in batches (the newest fix with the oldest backlog). Owns the pure `UplinkScheduler` and does its I/O;
/// state is lock-guarded and no lock is held across a request.
final class Uplink: Sendable {
    struct Credentials: Sendable {
        var username: String
        var password: String
    }

    private struct State {
        var scheduler: UplinkScheduler
        var tokens: StoredTokens?
        var flushRequested = false
        var flushWaiters: [CheckedContinuation<Void, Never>] = []
        var stopping = false
        var authEventRaised = false
        var lastPushId = 0
        var lastPollAt = -Double.infinity
        var observer: (any UplinkObserver)?
        /// The flush at the end of a shift sends the shift's last pings although the shift is over.
        var shiftEndFlush = false
        /// The driver whose queued items wait for their next login (set at logout); nil when none wait.
        var outboxOwner: String?
    }

    let client: BackendClient
    /// The WebSocket, tried first for batches and pushes; HTTPS batches and push polling while it is down.
    let webSocket: WebSocketLink?
    let outbox: Outbox
    private let stateDirectory: String
    private let credentials: Credentials?
    private let hub: EventHub
    private let logger: Logger
    private let isMoving: @Sendable () -> Bool
    /// Off shift no ping is sent (they wait for the next shift).
    private let onShift: @Sendable () -> Bool
    private let maxLoginAge: Double
    private let state: Mutex<State>
    private let wakeup = Wakeup()
    /// Ends the WebSocket loop's waits at shutdown.
    private let webSocketWakeup = Wakeup()
    static let maxPings = 500
    /// Batches sent back to back in one attempt (until none is left) before transitions get another look.
    static let batchesPerAttempt = 20

    init(
        client: BackendClient, webSocket: WebSocketLink?, outbox: Outbox, stateDirectory: String, credentials: Credentials?,
        hub: EventHub, scheduler: UplinkScheduler = UplinkScheduler(), logger: Logger, isMoving: @escaping @Sendable () -> Bool,
        onShift: @escaping @Sendable () -> Bool = { true }, maxLoginAge: Double = 24 * 3600
    ) {
        self.onShift = onShift
        self.maxLoginAge = maxLoginAge
        self.client = client
        self.webSocket = webSocket
        self.outbox = outbox
        self.stateDirectory = stateDirectory
        self.credentials = credentials
        self.hub = hub
        self.logger = logger
        self.isMoving = isMoving
        state = Mutex(State(
            scheduler: scheduler, tokens: TokenFile.load(from: stateDirectory),
            lastPushId: (try? outbox.value("last_push_id")).flatMap { $0.flatMap(Int.init) } ?? 0,
            outboxOwner: (try? outbox.value("outbox_owner")).flatMap { $0?.isEmpty == false ? $0 : nil }))
    }

    /// The workflow, told about answers, pushes and the link coming back.
    func setObserver(_ observer: any UplinkObserver) { state.withLock { $0.observer = observer } }
    private var observer: (any UplinkObserver)? { state.withLock { $0.observer } }

    var isOnline: Bool { state.withLock { $0.scheduler.linkState == .online } }

    /// Runs a request with a valid access token (refreshed or logged in as needed).
    func authorized<T: Sendable>(_ request: (BackendClient, String) async throws -> T) async throws -> T {
        try await request(client, try await validToken())
    }

    // MARK: The WebSocket

    /// Keeps the WebSocket open while the link is usable: reconnects with backoff (1 s doubling to 60 s), and
    /// not at all while credentials are refused.
    func runWebSocket() async {
        guard let webSocket else { return }
        var failures = 0
        while !(state.withLock { $0.stopping }) {
            if state.withLock({ $0.scheduler.authPaused }) {
                await webSocketWakeup.wait(until: Self.now() + 5, now: Self.now())
                continue
            }
            let opened = ContinuousClock.now
            do {
                let token = try await validToken()
                let lastPushId = state.withLock { $0.lastPushId }
                logger.debug("WebSocket connecting", metadata: ["url": "\(webSocket.url)"])
                try await webSocket.run(token: token, lastPushId: lastPushId) { [self] push in await received(push) }
            } catch {
                logger.debug("WebSocket unavailable", metadata: ["error": "\(error)"])
            }
            // A connection that lasted a while was fine: start the backoff again.
            failures = ContinuousClock.now - opened > .seconds(30) ? 0 : failures + 1
            let delay = min(60, Double(1 << min(failures, 6))) * Double.random(in: 0.5...1)
            await webSocketWakeup.wait(until: Self.now() + delay, now: Self.now())
        }
    }

    /// A push from the backend: remembered by id, so none is fetched twice, and handed to the workflow.
    private func received(_ push: Push) async {
        let isNew = state.withLock { state -> Bool in
            guard push.id > state.lastPushId else { return false }
            state.lastPushId = push.id
            return true
        }
        guard isNew else { return }
        try? outbox.setValue(String(push.id), for: "last_push_id")
        logger.info("push from the backend", metadata: ["kind": "\(push.kind.rawValue)", "id": "\(push.id)"])
        await observer?.pushReceived(push)
    }

    /// Without the WebSocket, pushes are polled at most every 30 s.
    private func pollPushes(token: String) async throws {
        guard !(webSocket?.isConnected ?? false) else { return }
        let now = Self.now()
        let (due, after) = state.withLock { state -> (Bool, Int) in
            guard now - state.lastPollAt >= 30 else { return (false, 0) }
            state.lastPollAt = now
            return (true, state.lastPushId)
        }
        guard due else { return }
        for push in try await client.pushes(after: after, token: token).pushes { await received(push) }
    }

    static func now() -> Double { WallClock.now() }

    // MARK: The loop

    func run() async {
        while !(state.withLock { $0.stopping }) {
            let now = Self.now()
            let backlog = currentBacklog()
            let action = state.withLock { $0.scheduler.next(now: now, moving: isMoving(), backlog: backlog, flushRequested: $0.flushRequested) }
            switch action {
            case .send:
                await attempt()
            case .wait(let until):
                releaseFlushWaiters()
                await wakeup.wait(until: until, now: now)
            case .authRequired:
                releaseFlushWaiters()
                await wakeup.wait(until: now + 3600, now: now)
            }
        }
        // The final flush: one more attempt for what is queued, unless the backend is known to be away.
        if state.withLock({ $0.scheduler.linkState == .online }), case let backlog = currentBacklog(), backlog.pings + backlog.items > 0 {
            await attempt()
        }
        releaseFlushWaiters()
    }

    func debug(_ message: String) { logger.debug("\(message)") }

    func stop() {
        state.withLock { $0.stopping = true }
        wakeup.signal()
        webSocketWakeup.signal()
        webSocket?.close()
    }

    /// The end of a shift: its last pings go out now; after this nothing is sent until the next shift.
    func flushShiftEnd() async {
        state.withLock { $0.shiftEndFlush = true }
        await flush()
        state.withLock { $0.shiftEndFlush = false }
    }

    /// Wakes the loop for an immediate attempt and returns once it is over.
    func flush() async {
        await withCheckedContinuation { continuation in
            state.withLock {
                $0.flushRequested = true
                $0.flushWaiters.append(continuation)
            }
            wakeup.signal()
        }
    }

    /// A transition or proof was queued: send it now.
    func itemQueued() { wakeup.signal() }

    private func releaseFlushWaiters() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state.flushWaiters = [] }
            return state.flushWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func currentBacklog() -> UplinkScheduler.Backlog {
        let depth = (try? outbox.depth()) ?? Outbox.Depth()
        let items = itemsHeld ? 0 : (try? outbox.headItems().count) ?? 0
        let pings = onShift() || state.withLock({ $0.shiftEndFlush }) ? depth.pings : 0
        return UplinkScheduler.Backlog(pings: pings, items: items, fullBatch: pings >= Self.maxPings)
    }

    /// Items queued by a driver who logged out wait for that driver's next login.
    private var itemsHeld: Bool {
        state.withLock { state in state.outboxOwner.map { $0 != state.tokens?.driverId } ?? false }
    }

    // MARK: One attempt

    private func attempt() async {
        state.withLock { $0.flushRequested = false }
        do {
            let token = try await validToken()
            try await sendItems(token: token)
            try await sendPings(token: token)
            try await pollPushes(token: token)
            let restored = state.withLock { state -> Bool in
                defer { state.scheduler.succeeded(now: Self.now()) }
                return state.scheduler.linkState != .online
            }
            if restored { await observer?.linkRestored() }
        } catch let error as BackendClientError where error.errorClass == .unauthorized {
            // The token was refused even after a refresh: try the configured credentials once, else ask.
            if let credentials, (try? await login(username: credentials.username, password: credentials.password)) != nil {
                return
            }
            authRequired("the backend refused the stored token: \(error.reason)")
        } catch let error as BackendClientError {
            let action = state.withLock { $0.scheduler.failed(.transient(error.reason), now: Self.now(), random: Double.random(in: 0..<1)) }
            logger.notice("backend unreachable, retrying", metadata: ["error": "\(error.reason)", "next": "\(action)"])
        } catch let error as NeedsLogin {
            authRequired(error.reason)
        } catch {
            let action = state.withLock { $0.scheduler.failed(.transient("\(error)"), now: Self.now(), random: Double.random(in: 0..<1)) }
            logger.error("outbox error", metadata: ["error": "\(error)", "next": "\(action)"])
        }
        releaseFlushWaiters()
    }

    private func authRequired(_ reason: String) {
        let first = state.withLock { state -> Bool in
            _ = state.scheduler.failed(.unauthorized, now: Self.now(), random: 0)
            defer { state.authEventRaised = true }
            return !state.authEventRaised
        }
        if first {
            logger.warning("log in required: \(reason)", metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.authRequired.rawValue)"])
        }
        if let params = try? Codec.encode(AuthRequiredEvent(reason: reason)) { hub.publish(EventTopic.authRequired, params: params) }
    }

    struct NeedsLogin: Error { let reason: String }

    /// The access token, refreshed when it expires within a minute; a login with the configured credentials
    /// when there is none.
    private func validToken() async throws -> String {
        let tokens = state.withLock { $0.tokens }
        guard let tokens else {
            guard let credentials else { throw NeedsLogin(reason: "no token: log in (driverctl login)") }
            return try await login(username: credentials.username, password: credentials.password).accessToken
        }
        if Self.now() - (tokens.loggedInAt ?? Self.now()) > maxLoginAge {
            guard let credentials else {
                throw NeedsLogin(reason: "the login is older than \(TextFormat.fixed(maxLoginAge / 3600, decimals: 1)) h: log in again")
            }
            return try await login(username: credentials.username, password: credentials.password).accessToken
        }
        guard tokens.expiresAt - Self.now() < 60 else { return tokens.accessToken }
        do {
            let refreshed = StoredTokens(try await client.refresh(refreshToken: tokens.refreshToken), now: Self.now(), loggedInAt: tokens.loggedInAt)
            try store(refreshed)
            return refreshed.accessToken
        } catch let error as BackendClientError where error.errorClass != .transient {
            guard let credentials else { throw NeedsLogin(reason: "the token expired and could not be refreshed: log in again") }
            return try await login(username: credentials.username, password: credentials.password).accessToken
        }
    }

    /// Logs in, stores the tokens (0600) and lets the loop go again.
    @discardableResult
    func login(username: String, password: String) async throws -> StoredTokens {
        let tokens = StoredTokens(try await client.login(username: username, password: password), now: Self.now())
        try store(tokens)
        let ownerLoggedIn = state.withLock { state -> Bool in
            guard state.outboxOwner == tokens.driverId else { return false }
            state.outboxOwner = nil
            return true
        }
        if ownerLoggedIn { try? outbox.setValue("", for: "outbox_owner") }
        state.withLock {
            $0.scheduler.authRestored()
            $0.authEventRaised = false
        }
        logger.info("logged in", metadata: ["driver": "\(tokens.driverId)"])
        wakeup.signal()
        // A new login (after a logout, say) wants the driver's route at once.
        if let observer { Task { await observer.linkRestored() } }
        return tokens
    }

    /// Forgets the tokens and pauses until the next login; what is queued stays for the same driver.
    func logout() {
        let driverId = state.withLock { state -> String? in
            defer {
                state.tokens = nil
                _ = state.scheduler.failed(.unauthorized, now: Self.now(), random: 0)
                state.authEventRaised = true
            }
            return state.tokens?.driverId
        }
        TokenFile.remove(from: stateDirectory)
        if let driverId {
            state.withLock { $0.outboxOwner = driverId }
            try? outbox.setValue(driverId, for: "outbox_owner")
        }
        webSocket?.disconnect()
        logger.info("logged out", metadata: ["driver": "\(driverId ?? "none")"])
    }

    private func store(_ tokens: StoredTokens) throws {
        try TokenFile.save(tokens, in: stateDirectory)
        state.withLock { $0.tokens = tokens }
    }

    /// Transitions and proofs: the head of each task's queue, again until none is left.
    private func sendItems(token: String) async throws {
        guard !itemsHeld else { return }
        while true {
            let items = try outbox.headItems()
            guard !items.isEmpty else { return }
            for item in items { try await send(item, token: token) }
        }
    }

    private func send(_ item: OutboxItemRecord, token: String) async throws {
        guard let id = item.id else { return }
        do {
            var receipt: PODReceipt?
            switch item.kind {
            case .status:
                _ = try await client.patchStatus(taskId: item.taskId, body: item.payload, idempotencyKey: item.idempotencyKey, token: token)
            case .podOTP:
                receipt = try await client.postOTP(taskId: item.taskId, body: item.payload, idempotencyKey: item.idempotencyKey, token: token)
            case .podPhoto:
                receipt = try await uploadPhoto(item, token: token)
            case .route:
                _ = try await client.putRoute(body: item.payload, token: token)
            }
            try outbox.complete(itemId: id)
            await observer?.itemAcked(item, receipt: receipt)
        } catch let error as BackendClientError where error.errorClass == .refused {
            // Never retried: kept with the backend's answer, and front ends are told.
            let answer = error.rawBody.isEmpty ? error.reason : error.rawBody
            try outbox.deadLetter(itemId: id, answer: answer, now: Self.now())
            let event = OutboxRefusedEvent(
                taskId: item.taskId, kind: item.kind.rawValue, idempotencyKey: item.idempotencyKey, status: error.status ?? 0, answer: answer)
            if let params = try? Codec.encode(event) { hub.publish(EventTopic.outboxRefused, params: params) }
            await observer?.itemRefused(item, error: error)
            logger.warning(
                "the backend refused a queued \(item.kind.rawValue) for task \(item.taskId)",
                metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.outboxRefused.rawValue)", "status": "\(error.status ?? 0)"])
        } catch let error as BackendClientError {
            try? outbox.recordFailure(itemId: id, error: error.reason)
            throw error
        }
    }

    /// A spooled photo, streamed with progress. A spool file that is gone cannot be sent ever: refused.
    private func uploadPhoto(_ item: OutboxItemRecord, token: String) async throws -> PODReceipt {
        let spooled: SpooledPhoto
        let bytes: Data
        do {
            spooled = try JSONDecoder().decode(SpooledPhoto.self, from: item.payload)
            bytes = try Data(contentsOf: URL(fileURLWithPath: spooled.file))
        } catch {
            throw BackendClientError(refusedLocally: "the spooled photo cannot be read: \(error)")
        }
        let observer = observer
        return try await client.postPhoto(
            taskId: item.taskId, photo: bytes, contentType: spooled.contentType, fields: spooled.formFields,
            idempotencyKey: item.idempotencyKey, token: token
        ) { sent, total in observer?.uploadProgress(item, sent: sent, total: total) }
    }

    private func sendPings(token: String) async throws {
        guard onShift() || state.withLock({ $0.shiftEndFlush }) else { return }
        for _ in 0..<Self.batchesPerAttempt {
            guard let batch = try outbox.claimPingBatch(maxPings: Self.maxPings, newBatchId: { UUID().uuidString.lowercased() }) else { return }
            let pings = batch.pings.map(Self.locationPing)
            let request = LocationBatch(batchId: batch.batchId, pings: pings)
            let ack: BatchAck
            if let webSocket, webSocket.isConnected, let viaSocket = try? await webSocket.send(request) {
                ack = viaSocket
            } else {
                // The same batch id over HTTPS: if the WebSocket copy arrived after all, it is stored once.
                ack = try await client.postLocations(request, token: token)
            }
            guard ack.batchId == batch.batchId else { throw BackendClientError.unexpected("ack for \(ack.batchId), sent \(batch.batchId)") }
            try outbox.ackPingBatch(batch.batchId)
        }
    }

    /// A recorded ping as sent: coordinates to 1e-7 degrees (about a centimetre), the rest to what a receiver
    /// actually resolves, so a batch carries no noise digits.
    static func locationPing(_ ping: PingRecord) -> LocationPing {
        func round(_ value: Double, _ digits: Double) -> Double { (value * digits).rounded() / digits }
        return LocationPing(
            lat: round(ping.latitude, 1e7), lng: round(ping.longitude, 1e7), accuracy: ping.horizontalError.map { round($0, 10) },
            speed: ping.speed.map { round($0, 100) }, heading: ping.track.map { round($0, 10) }, timestamp: round(ping.fixTime, 1000))
    }

    // MARK: Status

    /// - Parameter maxAge: how old the queue depths may be (a snapshot for `agent.status`; exact for `outbox.status`).
    func status(maxAge: Duration = .zero) -> OutboxStatus {
        let depth = (try? outbox.depth(maxAge: maxAge)) ?? Outbox.Depth()
        let now = Self.now()
        let transport = webSocket?.isConnected == true ? "websocket" : "https"
        let (scheduler, driverId) = state.withLock { ($0.scheduler, $0.tokens?.driverId) }
        return OutboxStatus(depth: depth, now: now, backend: client.baseURL, scheduler: scheduler, transport: transport, driverId: driverId)
    }

    var linkSummary: String { state.withLock { $0.scheduler.linkState.rawValue } }
}

extension BackendClientError {
    static func unexpected(_ reason: String) -> BackendClientError { BackendClientError(transportReason: reason) }
}
