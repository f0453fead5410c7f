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
/// in batches (the newest fix with the oldest backlog), and a heartbeat instead of pings while the receiver has
/// no usable fix. Owns the pure `UplinkScheduler` and does its I/O; state is lock-guarded and no lock is held
/// across a request. The scheduler, backoff and token ages run on the monotonic clock: a wall clock that
/// steps by years expires, drops or delays nothing.
final class Uplink: Sendable {
    struct Credentials: Sendable {
        var username: String
        var password: String
    }

    private struct State {
        var scheduler: UplinkScheduler
        var tokens: StoredTokens?
        /// The tokens' login and expiry on the monotonic clock (from their stamps and the trusted clock).
        var tokenTimes: TokenTimes?
        /// When a position or heartbeat last reached the backend (monotonic).
        var lastLocationSentAt: Double
        /// The GPS state the last heartbeat reported, until a position goes out again: a new state goes at once.
        var heartbeatReported: String?
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
    private let clock: DaemonClock
    private let unitState: UnitState
    /// The heartbeat to send while the receiver has no usable fix (nil: it has one).
    private let heartbeat: @Sendable () -> UnitHeartbeat?
    private let state: Mutex<State>
    private let wakeup = Wakeup()
    /// Ends the WebSocket loop's waits at shutdown.
    private let webSocketWakeup = Wakeup()
    static let maxPings = 500
    /// A heartbeat goes when nothing else told the backend about the position for this long (seconds).
    static let heartbeatInterval = 60.0
    /// Batches sent back to back in one attempt (until none is left) before transitions get another look.
    static let batchesPerAttempt = 20

    init(
        client: BackendClient, webSocket: WebSocketLink?, outbox: Outbox, stateDirectory: String, credentials: Credentials?,
        hub: EventHub, scheduler: UplinkScheduler = UplinkScheduler(), logger: Logger, isMoving: @escaping @Sendable () -> Bool,
        onShift: @escaping @Sendable () -> Bool = { true }, maxLoginAge: Double = 24 * 3600, clock: DaemonClock,
        heartbeat: @escaping @Sendable () -> UnitHeartbeat? = { nil }
    ) {
        self.clock = clock
        self.heartbeat = heartbeat
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
        unitState = UnitState(store: outbox.store)
        let tokens = TokenFile.load(from: stateDirectory)
        let stored = (try? unitState.read()) ?? UnitStateRecord()
        state = Mutex(State(
            scheduler: scheduler, tokens: tokens, tokenTimes: tokens.map { TokenTimes($0, clock: clock) },
            lastLocationSentAt: clock.monotonic, lastPushId: stored.lastPushId, outboxOwner: stored.outboxOwner))
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
                await webSocketWakeup.wait(until: now + 5, now: now)
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
            await webSocketWakeup.wait(until: now + delay, now: now)
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
        _ = try? unitState.update { $0.lastPushId = max($0.lastPushId, push.id) }
        logger.info("push from the backend", metadata: ["kind": "\(push.kind.rawValue)", "id": "\(push.id)"])
        await observer?.pushReceived(push)
    }

    /// Without the WebSocket, pushes are polled at most every 30 s.
    private func pollPushes(token: String) async throws {
        guard !(webSocket?.isConnected ?? false) else { return }
        let now = self.now
        let (due, after) = state.withLock { state -> (Bool, Int) in
            guard now - state.lastPollAt >= 30 else { return (false, 0) }
            state.lastPollAt = now
            return (true, state.lastPushId)
        }
        guard due else { return }
        for push in try await client.pushes(after: after, token: token).pushes { await received(push) }
    }

    /// Scheduling, backoff and ages: monotonic seconds.
    private var now: Double { clock.monotonic }

    /// The trusted clock changed its source (GPS time arrived, NTP synchronised): the tokens' stamps mean
    /// something else on the monotonic clock now.
    func clockSourceChanged() {
        state.withLock { state in state.tokenTimes = state.tokens.map { TokenTimes($0, clock: clock) } }
    }

    // MARK: The loop

    func run() async {
        while !(state.withLock { $0.stopping }) {
            let now = self.now
            let backlog = currentBacklog(now: now)
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
        if state.withLock({ $0.scheduler.linkState == .online }), case let backlog = currentBacklog(now: now), backlog.pings + backlog.items > 0 {
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

    private func currentBacklog(now: Double) -> UplinkScheduler.Backlog {
        let depth = (try? outbox.depth()) ?? Outbox.Depth()
        let items = itemsHeld ? 0 : (try? outbox.headItems().count) ?? 0
        let pings = onShift() || state.withLock({ $0.shiftEndFlush }) ? depth.pings : 0
        return UplinkScheduler.Backlog(
            pings: pings, items: items, fullBatch: pings >= Self.maxPings, heartbeatDue: pings == 0 && heartbeatDue(now: now))
    }

    /// On shift the receiver has no usable fix, and the backend has not heard so yet, or not for a minute.
    private func heartbeatDue(now: Double) -> Bool {
        guard onShift(), let heartbeat = heartbeat() else { return false }
        let (sentAt, reported) = state.withLock { ($0.lastLocationSentAt, $0.heartbeatReported) }
        return reported != heartbeat.gps || now - sentAt >= Self.heartbeatInterval
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
                defer { state.scheduler.succeeded(now: now) }
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
            let reason = explained(error.reason)
            let action = state.withLock { $0.scheduler.failed(.transient(reason), now: now, random: Double.random(in: 0..<1)) }
            logger.notice("backend unreachable, retrying", metadata: ["error": "\(reason)", "next": "\(action)"])
        } catch let error as NeedsLogin {
            authRequired(error.reason)
        } catch {
            let action = state.withLock { $0.scheduler.failed(.transient("\(error)"), now: now, random: Double.random(in: 0..<1)) }
            logger.error("outbox error", metadata: ["error": "\(error)", "next": "\(action)"])
        }
        releaseFlushWaiters()
    }

    /// A TLS failure while the system clock is far off is the clock's fault, not the backend's: certificates
    /// look not yet valid (or expired) until the clock is set. Say so, since that is what the operator must fix.
    private func explained(_ reason: String) -> String {
        let lowered = reason.lowercased()
        guard lowered.contains("certificate") || lowered.contains("handshake") || lowered.contains("tls") || lowered.contains("ssl") else { return reason }
        let clock = clock.status()
        guard clock.source != .ntp, abs(clock.systemClockOffset) > 3600 else { return reason }
        return reason + " (the system clock is not synchronised and is " + TextFormat.clockOffset(clock.systemClockOffset)
            + " GPS time: TLS certificates cannot be checked until it is set; chrony with the package's GPS drop-in sets it)"
    }

    private func authRequired(_ reason: String) {
        let first = state.withLock { state -> Bool in
            _ = state.scheduler.failed(.unauthorized, now: now, random: 0)
            defer { state.authEventRaised = true }
            return !state.authEventRaised
        }
        if first {
            logger.warning("log in required: \(reason)", metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.authRequired.rawValue)"])
        }
        hub.publish(Events.authRequired, AuthRequiredEvent(reason: reason))
    }

    struct NeedsLogin: Error { let reason: String }

    /// The access token, refreshed when it expires within a minute; a login with the configured credentials
    /// when there is none.
    private func validToken() async throws -> String {
        let (tokens, times) = state.withLock { ($0.tokens, $0.tokenTimes) }
        guard let tokens else {
            guard let credentials else { throw NeedsLogin(reason: "no token: log in (driverctl login)") }
            return try await login(username: credentials.username, password: credentials.password).accessToken
        }
        if let times, now - times.loggedIn > maxLoginAge {
            guard let credentials else {
                throw NeedsLogin(reason: "the login is older than \(TextFormat.fixed(maxLoginAge / 3600, decimals: 1)) h: log in again")
            }
            return try await login(username: credentials.username, password: credentials.password).accessToken
        }
        guard let times, times.expires - now < 60 else { return tokens.accessToken }
        do {
            let refreshed = StoredTokens(
                try await client.refresh(refreshToken: tokens.refreshToken), now: clock.now().time, loggedInAt: tokens.loggedInAt)
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
        let tokens = StoredTokens(try await client.login(username: username, password: password), now: clock.now().time)
        try store(tokens)
        let ownerLoggedIn = state.withLock { state -> Bool in
            guard state.outboxOwner == tokens.driverId else { return false }
            state.outboxOwner = nil
            return true
        }
        if ownerLoggedIn { _ = try? unitState.update { $0.outboxOwner = nil } }
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
                state.tokenTimes = nil
                _ = state.scheduler.failed(.unauthorized, now: now, random: 0)
                state.authEventRaised = true
            }
            return state.tokens?.driverId
        }
        TokenFile.remove(from: stateDirectory)
        if let driverId {
            state.withLock { $0.outboxOwner = driverId }
            _ = try? unitState.update { $0.outboxOwner = driverId }
        }
        webSocket?.disconnect()
        logger.info("logged out", metadata: ["driver": "\(driverId ?? "none")"])
    }

    private func store(_ tokens: StoredTokens) throws {
        try TokenFile.save(tokens, in: stateDirectory)
        let times = TokenTimes(tokens, clock: clock)
        state.withLock {
            $0.tokens = tokens
            $0.tokenTimes = times
        }
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
            try outbox.deadLetter(itemId: id, answer: answer, now: clock.now().time)
            let event = OutboxRefusedEvent(
                taskId: item.taskId, kind: item.kind.rawValue, idempotencyKey: item.idempotencyKey, status: error.status ?? 0, answer: answer)
            hub.publish(Events.outboxRefused, event)
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
            guard let batch = try outbox.claimPingBatch(maxPings: Self.maxPings, newBatchId: { UUID().uuidString.lowercased() }) else {
                try await sendHeartbeatIfDue(token: token)
                return
            }
            let pings = batch.pings.map(Self.locationPing)
            try await send(LocationBatch(batchId: batch.batchId, pings: pings), token: token)
            try outbox.ackPingBatch(batch.batchId)
            state.withLock { $0.heartbeatReported = nil }
        }
    }

    /// While the receiver has no usable fix, the backend hears so once a minute instead of nothing (or an old
    /// position): a batch without pings, with the unit's GPS state and its time stamp.
    private func sendHeartbeatIfDue(token: String) async throws {
        guard heartbeatDue(now: now), let heartbeat = heartbeat() else { return }
        try await send(LocationBatch(batchId: UUID().uuidString.lowercased(), pings: [], heartbeat: heartbeat), token: token)
        state.withLock { $0.heartbeatReported = heartbeat.gps }
        logger.debug("heartbeat sent", metadata: ["gps": "\(heartbeat.gps)"])
    }

    /// One location batch, over the WebSocket when it is open, else HTTPS; throws unless the backend acked it.
    private func send(_ request: LocationBatch, token: String) async throws {
        let ack: BatchAck
        if let webSocket, webSocket.isConnected, let viaSocket = try? await webSocket.send(request) {
            ack = viaSocket
        } else {
            // The same batch id over HTTPS: if the WebSocket copy arrived after all, it is stored once.
            ack = try await client.postLocations(request, token: token)
        }
        guard ack.batchId == request.batchId else { throw BackendClientError.unexpected("ack for \(ack.batchId), sent \(request.batchId)") }
        let now = self.now
        state.withLock { $0.lastLocationSentAt = now }
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
        let transport: UplinkTransport = webSocket?.isConnected == true ? .websocket : .https
        let (scheduler, driverId) = state.withLock { ($0.scheduler, $0.tokens?.driverId) }
        return OutboxStatus(
            depth: depth, now: clock.now().time, monotonic: now, backend: client.baseURL, scheduler: scheduler, transport: transport,
            driverId: driverId)
    }

    var linkSummary: UplinkLink { state.withLock { $0.scheduler.linkState } }
}

extension BackendClientError {
    static func unexpected(_ reason: String) -> BackendClientError { BackendClientError(transportReason: reason) }
}

/// A login's age and a token's expiry on the monotonic clock: computed from their stamps and the trusted
/// clock when the tokens are loaded or stored (and again when the clock's source changes), then compared with
/// the monotonic clock only.
struct TokenTimes: Sendable, Equatable {
    var loggedIn: Double
    var expires: Double

    init(_ tokens: StoredTokens, clock: DaemonClock) {
        let stamp = clock.now().time, monotonic = clock.monotonic
        loggedIn = monotonic - (stamp - (tokens.loggedInAt ?? stamp))
        expires = monotonic + (tokens.expiresAt - stamp)
    }
}
