import BackendClient
import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials
import JSONRPC
import Logging
import Synchronization

/// Sends the outbox to the backend: transitions and proofs of delivery first (in order per task), then pings
/// in batches (the newest fix with the oldest backlog), and a heartbeat instead of pings while the receiver has
/// no usable fix. The pure `UplinkStateMachine` decides; this class performs (requests, waits, events) and
/// reports outcomes back. Tokens have their owner (`TokenStore`), pushes theirs (`PushInbox`). State is
/// lock-guarded and no lock is held across a request. Times are monotonic: a wall clock that steps by years
/// expires, drops or delays nothing.
final class Uplink: BackendGate, Sendable {
    struct State {
        var machine: UplinkStateMachine
        var flushWaiters: [CheckedContinuation<Void, Never>] = []

        /// The flushes waiting so far, to be answered by the caller (outside the lock).
        mutating func takeFlushWaiters() -> [CheckedContinuation<Void, Never>] {
            defer { flushWaiters = [] }
            return flushWaiters
        }
        /// How each kind of item is sent and its outcomes handled (by the kind's owner).
        var handlers: [OutboxItemRecord.Kind: OutboxKindHandler] = [:]
        /// The owners' subscriptions, in the order they subscribed (pushes go to each in that order).
        var subscriptions: [UplinkSubscription] = []
        /// The flush at the end of a shift sends the shift's last pings although the shift is over.
        var shiftEndFlush = false
        /// Until when the backend is away: the sender's last attempt got no answer at all (refused, reset, timed
        /// out), and its next is due then. An answer, even a 5xx, means the backend is there.
        var backendAwayUntil: Double?
        /// Items the backend acknowledged whose completion the store could not record (a full or read-only disk):
        /// not sent again, recorded at each attempt until the disk takes it (a resend after a crash is idempotent).
        var unrecordedCompletions: [Int64: OutboxItemRecord] = [:]
        /// Bumped at each new identity: an attempt that started under the old one does not set waits for the new one.
        var identityGeneration = 0
        /// Lost batches ride with the next one (`LocationBatch.carried`) until the backend's ack shows it does not take
        /// them (an older backend): then each goes alone, as before.
        var backendTakesCarried = true
    }

    /// The driver's tokens and the owners' calls, which this sender judges (`BackendGate`).
    let session: BackendSession
    var client: any BackendAPI { session.client }
    var tokens: TokenStore { session.tokens }
    /// The WebSocket, tried first for batches and pushes; HTTPS batches and push polling while it is down.
    let webSocket: WebSocketLink?
    let outbox: Outbox
    /// Pings not written yet: sent from memory when nothing older waits on disk (nil: tracking is off).
    let recorder: PingRecorder?
    let pushes: PushInbox
    /// Pushes are handled one at a time, whichever way they came (the WebSocket, a poll): otherwise one handled
    /// quickly could move the durable cursor past one still being handled (a fleet request's bundle), and a power
    /// cut then would lose that one for good.
    let pushTurns = InTurn()
    let hub: EventHub
    let logger: Logger
    /// Moving, parked, or parked saving the battery: how often timed records go.
    let cadence: @Sendable () -> UplinkStateMachine.Cadence
    /// Off shift no ping is sent (they wait for the next shift).
    let onShift: @Sendable () -> Bool
    let clock: DaemonClock
    private let unitState: UnitState
    /// The heartbeat to send while the receiver has no usable fix (nil: it has one).
    let heartbeat: @Sendable () -> UnitHeartbeat?
    let state: Mutex<State>
    private let wakeup: Wakeup
    /// An SOS, transition or proof was queued since the items were last looked at: a draining backlog lets it
    /// go before its next batch.
    let itemsQueued = Atomic<Bool>(false)
    /// Ends the WebSocket loop's waits at shutdown.
    let webSocketWakeup: Wakeup
    static let maxPings = 500
    /// Batches sent back to back in one attempt (until none is left) before transitions get another look.
    static let batchesPerAttempt = 20

    init(
        client: any BackendAPI, webSocket: WebSocketLink?, outbox: Outbox, recorder: PingRecorder? = nil, stateDirectory: String, credentials: BackendSession.Credentials?,
        hub: EventHub, configuration: UplinkStateMachine.Configuration = .init(), logger: Logger,
        cadence: @escaping @Sendable () -> UplinkStateMachine.Cadence, onShift: @escaping @Sendable () -> Bool = { true }, maxLoginAge: Double = 24 * 3600,
        clock: DaemonClock, heartbeat: @escaping @Sendable () -> UnitHeartbeat? = { nil }
    ) {
        self.clock = clock
        wakeup = clock.wakeup()
        webSocketWakeup = clock.wakeup()
        self.heartbeat = heartbeat
        self.onShift = onShift
        self.webSocket = webSocket
        self.outbox = outbox
        self.recorder = recorder
        self.hub = hub
        self.logger = logger
        self.cadence = cadence
        unitState = UnitState(store: outbox.store)
        session = BackendSession(
            client: client, stateDirectory: stateDirectory, credentials: credentials, maxLoginAge: maxLoginAge, clock: clock, logger: logger,
            health: outbox.store.health)
        pushes = PushInbox(store: outbox.store, driver: session.tokens.driverId, logger: logger)
        let unitState = unitState
        let heldFor = logger.valueOrLog("reading whose queued items these are") { try unitState.read() }?.outboxOwner
        state = Mutex(State(machine: UplinkStateMachine(
            configuration: configuration, itemsHeldFor: heldFor, now: clock.monotonic, random: Double.random(in: 0..<1))))
        // The store announces every item it can send (after its commit, or its sync): no owner wakes the sender.
        outbox.store.whenItemQueued { [weak self] in self?.itemQueued() }
        session.judged(by: self)
    }

    /// `handler` sends `kind`'s items and hears their outcomes (one handler a kind).
    func register(_ kind: OutboxItemRecord.Kind, _ handler: OutboxKindHandler) {
        state.withLock { state in
            precondition(state.handlers[kind] == nil, "two handlers for \(kind.rawValue) items")
            state.handlers[kind] = handler
        }
    }

    func handler(of kind: OutboxItemRecord.Kind) -> OutboxKindHandler? { state.withLock { $0.handlers[kind] } }

    /// Puts `wrap`'s handler in place of `kind`'s (an in-process test watching what the uplink hands an owner).
    func wrapHandler(of kind: OutboxItemRecord.Kind, _ wrap: (OutboxKindHandler) -> OutboxKindHandler) {
        state.withLock { state in state.handlers[kind] = state.handlers[kind].map(wrap) }
    }

    /// The kinds some owner sends (every kind, once the daemon is assembled).
    var ownedKinds: Set<OutboxItemRecord.Kind> { state.withLock { Set($0.handlers.keys) } }

    /// An owner's pushes, link returns and driver changes (one subscription an owner, made in its `attach(to:)`).
    func subscribe(_ subscription: UplinkSubscription) { state.withLock { $0.subscriptions.append(subscription) } }

    var isOnline: Bool { state.withLock { $0.machine.isOnline } }

    var loginRequired: Bool { state.withLock { $0.machine.link == .authRequired } }

    /// Scheduling, backoff and ages: monotonic seconds.
    var now: Double { clock.monotonic }

    /// No owner's call knocks while a `Retry-After` runs (only the sender's SOS does), while the backend is away (the
    /// sender's last attempt got no answer, until its next), or before the sender's first turn after a start.
    func mayCall() throws {
        let (quietUntil, awayUntil, turnAt) = state.withLock { state in
            (state.machine.backendQuietUntil, state.backendAwayUntil, state.machine.link == .idle ? state.machine.firstAttemptAt : nil)
        }
        if let quietUntil, quietUntil > now {
            throw BackendClientError(transportReason: "the backend asked for quiet: \(Int((quietUntil - now).rounded(.up))) s left")
        }
        // The backend is away (no answer at all): only the sender's attempts find out when it is back (each owner asks
        // again then). A backend that answered, even with a 5xx, is there: owners keep their own schedules.
        if let awayUntil, awayUntil > now {
            throw BackendClientError(transportReason: "the backend is unreachable: the next attempt in \(Int((awayUntil - now).rounded(.up))) s")
        }
        // A fleet's start is spread: no owner knocks before the sender's first turn (each asks again when the link is up).
        if let turnAt, turnAt > now {
            throw BackendClientError(transportReason: "this unit's turn after the start comes in \(Int((turnAt - now).rounded(.up))) s (uplink.fleet_size)")
        }
    }

    /// An owner heard "not now": the sender waits it out too. `identityGeneration`: the identity the request went under
    /// (nil: the current one), as `failed(_:startedUnder:)` takes it.
    func heardNotNow(_ error: BackendClientError) { heardNotNow(error, identityGeneration: nil) }

    func heardNotNow(_ error: BackendClientError, identityGeneration generation: Int?) {
        _ = failed(.transient(error.reason, retryAfter: error.retryAfter), startedUnder: generation)
    }

    /// The unit enrolled or renewed its certificate: the waits its old identity caused end (the backend's hour for a unit
    /// without one, a backoff of refused handshakes), and the queue goes now, the WebSocket with it.
    func identityChanged() {
        state.withLock { state in
            state.identityGeneration += 1
            state.machine.identityChanged()
            state.backendAwayUntil = nil
        }
        wakeup.signal()
        webSocketWakeup.signal()
    }

    /// The trusted clock changed its source: the tokens' ages are read anew.
    func clockSourceChanged() { tokens.clockSourceChanged() }

    // MARK: The loop

    var isStopping: Bool { state.withLock { $0.machine.isStopping } }

    func run() async {
        loop: while true {
            let now = self.now
            let backlog = currentBacklog()
            let cadence = onShift() ? self.cadence() : .offShift
            client.keepConnections(cadence == .moving || cadence == .stationary)
            let action = state.withLock { $0.machine.next(now: now, cadence: cadence, backlog: backlog) }
            switch action {
            case .attempt, .finalAttempt:
                await attempt()
                if action == .finalAttempt { break loop }
            case .resend:
                await attempt(resending: true)
            case .wait(let until):
                releaseFlushWaiters()
                await wakeup.wait(until: until)
            case .waitForLogin:
                releaseFlushWaiters()
                await wakeup.wait(until: now + 3600)
            case .finished:
                break loop
            }
        }
        releaseFlushWaiters()
    }

    func debug(_ message: String) { logger.debug("\(message)") }

    func stop() {
        state.withLock { $0.machine.stop() }
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
                $0.machine.requestFlush()
                $0.flushWaiters.append(continuation)
            }
            wakeup.signal()
        }
    }

    /// The van's motion or battery mode changed, or the shift started or ended: the loop looks again at once (a
    /// parked van's 2-minute wait for its burst ends when it drives off).
    func cadenceMayHaveChanged() { wakeup.signal() }

    /// An item was queued (the store says so): an SOS, a transition or a proof goes now (a low-priority one with the
    /// next batch).
    private func itemQueued() {
        itemsQueued.store(true, ordering: .releasing)
        wakeup.signal()
    }

    private func releaseFlushWaiters() {
        let waiters = state.withLock { $0.takeFlushWaiters() }
        for waiter in waiters { waiter.resume() }
    }

    private func currentBacklog() -> UplinkStateMachine.Backlog {
        // A driver action just queued while the link is up: it goes now whatever else waits (the attempt sends
        // items, then pings), so the queue need not be counted first. Its reply to the driver waits for the
        // disk meanwhile (Workflow.act).
        let fresh = itemsQueued.load(ordering: .acquiring)
        if fresh, state.withLock({ $0.machine.link == .online }), !itemsHeld {
            return UplinkStateMachine.Backlog(pings: 0, items: 1, freshItems: true)
        }
        let depth: Outbox.Depth
        let heads: [OutboxItemRecord]
        do {
            depth = try outbox.depth()
            heads = itemsHeld ? [] : try outbox.headItems(excluding: unrecordedCompletionIds)
        } catch {
            // Not an empty queue: an attempt is made, and its own read of the queue fails as an attempt does (logged,
            // backed off, tried again), so the error is said and nothing waits unseen.
            logger.error("the outbox cannot be read: \(Store.describeWriteFailure(error))")
            return UplinkStateMachine.Backlog(pings: 0, items: 1)
        }
        let pings = onShift() || state.withLock({ $0.shiftEndFlush }) ? depth.pings + (recorder?.pendingCount ?? 0) : 0
        let gps = onShift() ? heartbeat().flatMap { GPSLinkState(rawValue: $0.gps) } : nil
        return UplinkStateMachine.Backlog(
            pings: pings, items: heads.count { $0.kind.priority < .low }, urgent: heads.count { $0.kind.priority == .urgent },
            lowItems: heads.count { $0.kind.priority == .low }, fullBatch: pings >= Self.maxPings, gpsWithoutFix: gps,
            freshItems: fresh && !itemsHeld)
    }

    /// Items queued by a driver who logged out wait for that driver's next login.
    var itemsHeld: Bool {
        let driver = tokens.driverId
        return state.withLock { $0.machine.itemsHeld(currentDriver: driver) }
    }

    // MARK: One attempt

    /// `resending`: a lost request's items again (`Action.resend`), without pings (a lost batch rides with the next turn's),
    /// low items and pushes.
    private func attempt(resending: Bool = false) async {
        // A flush waits for an attempt that starts after it asked: one asking meanwhile waits for the next (its
        // request makes one at once), not for this one's outcome (a backend back up after this attempt failed).
        let (flushWaiters, generation) = state.withLock { state in
            state.machine.attemptStarted()
            return (state.takeFlushWaiters(), state.identityGeneration)
        }
        let effect: UplinkStateMachine.Effect
        do {
            let token = try await session.validToken()
            await recordCompletions()
            // A store that cannot record an item's outcome holds up neither the pings (they need no disk) nor the rest.
            try await unlessStoreFails("sending the queued items") { try await self.sendItems(upTo: .normal, token: token) }
            if !resending {
                try await sendPings(token: token)
                try await unlessStoreFails("sending the low-priority items") { try await self.sendItems(upTo: .low, token: token) }
                try await pollPushes(token: token)
            }
            effect = state.withLock { state in
                state.backendAwayUntil = nil
                return state.machine.attemptSucceeded(now: now)
            }
        } catch let error as BackendClientError where error.errorClass == .unauthorized {
            effect = failed(.unauthorized("the backend refused the stored token: \(error.reason)"), startedUnder: generation)
        } catch let error as BackendClientError {
            let reason = error.reason
            effect = failed(error.isLostRequest ? .lost(reason) : .transient(reason, retryAfter: error.retryAfter), startedUnder: generation)
            // Away only when the sender backs off after no answer (a lost request on a working link is resent instead).
            let away = state.withLock { state in
                state.backendAwayUntil = error.status == nil ? state.machine.retryAt : nil
                return state.backendAwayUntil != nil
            }
            if error.isLostRequest, !away {
                logger.info("a request was lost on the link, sending again", metadata: ["error": "\(reason)", "next": "\(nextAttempt)"])
            } else {
                logger.notice("backend unreachable, retrying", metadata: ["error": "\(reason)", "next": "\(nextAttempt)"])
            }
        } catch let error as BackendSession.NeedsLogin {
            effect = failed(.needsLogin(error.reason), startedUnder: generation)
        } catch {
            effect = failed(.transient("\(error)"), startedUnder: generation)
            logger.error("outbox error", metadata: ["error": "\(error)", "next": "\(nextAttempt)"])
        }
        await perform(effect)
        for waiter in flushWaiters { waiter.resume() }
    }

    /// When the next attempt comes, for the journal: a wait in seconds, not the monotonic clock's reading (which
    /// means nothing to an operator, and once read like a customer's code to the log privacy check).
    private var nextAttempt: String {
        guard let retryAt = state.withLock({ $0.machine.retryAt ?? $0.machine.resendAt }) else { return "\(linkSummary.rawValue)" }
        let seconds = max(0, retryAt - now)
        return "retry in \((seconds * 10).rounded() / 10) s"
    }

    /// `startedUnder`: the identity the request went under (`identityGeneration`; nil: the current one). A failure heard
    /// under one replaced meanwhile (a 403 CERTIFICATE_REQUIRED racing the enrolment, to an attempt or to the WebSocket's
    /// upgrade) was about the old identity: the waits end, and the new one goes at once.
    private func failed(_ failure: UplinkStateMachine.Failure, startedUnder generation: Int?) -> UplinkStateMachine.Effect {
        let hasCredentials = session.credentials != nil, random = Double.random(in: 0..<1), now = self.now
        return state.withLock { state in
            let effect = state.machine.attemptFailed(failure, now: now, random: random, hasCredentials: hasCredentials)
            if let generation, generation != state.identityGeneration {
                state.machine.identityChanged()
                state.backendAwayUntil = nil
            }
            return effect
        }
    }

    private func perform(_ effect: UplinkStateMachine.Effect) async {
        switch effect {
        case .none:
            break
        case .linkRestored:
            for subscription in state.withLock({ $0.subscriptions }) { await subscription.linkRestored?() }
        case .loginWithCredentials:
            guard let credentials = session.credentials else { return }
            do {
                try await session.login(username: credentials.username, password: credentials.password)
            } catch {
                await perform(state.withLock { $0.machine.credentialsFailed("the configured credentials were refused: \(error)") })
            }
        case .announceAuthRequired(let reason):
            logger.warning("log in required: \(reason)", metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.authRequired.rawValue)"])
            hub.publish(Events.authRequired, AuthRequiredEvent(reason: reason))
        }
    }

    // MARK: The driver's session

    /// Another driver over this one: a logout first (their queued items stay for their next login), and the WebSocket
    /// opened with their token closes (it would carry this driver's pings as theirs).
    func driverArriving(_ tokens: StoredTokens, previous: String?) async throws {
        guard let previous, previous != tokens.driverId else { return }
        logger.info("another driver logs in: the previous one is logged out", metadata: ["previous": "\(previous)", "driver": "\(tokens.driverId)"])
        // What the previous driver's login showed goes, as at a logout.
        for subscription in state.withLock({ $0.subscriptions }) { try await subscription.driverChanging?() }
        try session.logout()
        webSocketWakeup.signal()
    }

    /// The loop goes again: its next success fetches the route; items held for this driver are released.
    func driverLoggedIn(_ tokens: StoredTokens) {
        pushes.follow(driver: tokens.driverId)
        let released = state.withLock { state -> Bool in
            let held = state.machine.itemsHeldFor
            state.machine.loggedIn(driver: tokens.driverId)
            return held != nil && state.machine.itemsHeldFor == nil
        }
        if released { _ = logger.valueOrLog("releasing the queued items to \(tokens.driverId)") { try unitState.update { $0.outboxOwner = nil } } }
        wakeup.signal()
    }

    /// Pauses until the next login; what is queued stays for the same driver.
    func driverLoggedOut(_ driverId: String?) {
        state.withLock { $0.machine.loggedOut(driver: driverId) }
        // Not stored: after a restart the queued items would wait for nobody in particular; said in the journal.
        if let driverId { _ = logger.valueOrLog("holding the queued items for \(driverId)") { try unitState.update { $0.outboxOwner = driverId } } }
        webSocket?.disconnect()
    }

    // MARK: Status

    /// - Parameter maxAge: how old the queue depths may be (a snapshot for `agent.status`; exact for `outbox.status`).
    func status(maxAge: Duration = .zero) throws -> OutboxStatus {
        var depth = try outbox.depth(maxAge: maxAge)
        // Pings still in memory wait for the backend too (on disk only if their window ends first).
        depth.pings += recorder?.pendingCount ?? 0
        let machine = state.withLock { $0.machine }
        // Where batches go: a lossy link's go by POST while its socket only listens.
        let transport: UplinkTransport = webSocket?.isConnected == true && machine.batchesOverSocket(now: now) ? .websocket : .https
        return OutboxStatus(
            depth: depth, now: clock.now().time, monotonic: now, backend: client.baseURL, machine: machine, transport: transport,
            driverId: tokens.driverId, driverLanguage: tokens.driverLanguage)
    }

    var linkSummary: UplinkLink { state.withLock { $0.machine.link.summary } }
}

extension UplinkStateMachine.Link {
    /// The wire name of the link state.
    var summary: UplinkLink {
        switch self {
        case .idle: .idle
        case .online: .online
        case .backingOff: .backingOff
        case .authRequired: .authRequired
        }
    }
}

extension BackendClientError {
    static func unexpected(_ reason: String) -> BackendClientError { BackendClientError(transportReason: reason) }
}
