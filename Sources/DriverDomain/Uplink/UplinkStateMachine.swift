import DriverAPI

/// The uplink's decisions, pure: when to send (batches every 5 s moving and 10 s stationary, low-priority
/// records with them; at once when an SOS, a transition or a proof waits, a full batch is ready, a heartbeat is
/// due or a flush is asked for), what a lost request costs (a request the link lost after it worked: its items go
/// again within 0.5 to 2 s while the `RetryBudget` lasts, else with the next turn; a lost batch rides with the next
/// turn's, costing no request of its own; three losses in a row are an outage, backed off at most a batch
/// interval, which a driver's tap does not wait out; a lossy link's batches go as requests, not over the WebSocket), how to back off (no connection, 5xx: decorrelated jitter, 1 s up to a cap of
/// 2 min by default, one step down per success and reset once a link has stayed up `stableAfter`; a backend's "not now", 429 or 503 with
/// `Retry-After`, is waited out first, a random share of the fleet's spread window added on top; an unacked SOS is
/// tried again at least every `urgentRetryInterval` whatever the backend asked), when the first attempt after a
/// start goes (a random share of the spread window: a depot's units booting together do not knock together), what a refused credential
/// means (the configured credentials once, then the driver must log in, told once per spell), whose queued
/// items may go (those of a driver who logged out wait for that driver), and the last attempt at shutdown.
///
/// Its runner (`Uplink`) asks `next`, performs what it says, and reports each attempt's outcome; every time
/// is the runner's monotonic clock, so a wall clock that steps changes nothing here.
public struct UplinkStateMachine: Sendable, Equatable {
    public struct Configuration: Sendable, Equatable {
        public var movingInterval: Double
        public var stationaryInterval: Double
        /// Parked in battery-saver mode (the ignition off, or a low battery): pings wait this long for one burst, since
        /// a cellular radio pays per waking, not per byte (`Cadence.saver`).
        public var saverInterval: Double
        /// Off shift, how often the loop looks again with nothing timed (`Cadence.offShift`): each look wakes a
        /// sleeping unit.
        public var restingInterval: Double
        public var backoff: Backoff
        /// While the receiver has no usable fix, the backend hears so this often (seconds), and at once when
        /// the receiver's state changes.
        public var heartbeatInterval: Double
        /// While an SOS waits for its ack, the longest pause between attempts (seconds), backoff or not.
        public var urgentRetryInterval: Double
        /// A link up this long (seconds) ends the backoff: the next failure starts again from the base. A backend
        /// that answers once between refusals does not reset a whole fleet's backoff at each answer.
        public var stableAfter: Double
        /// The fleet's size over the new connections a second its backend takes (seconds): the first attempt after a
        /// start, and the return after a `Retry-After`, wait a random share of it, so the fleet arrives at about
        /// the rate the backend takes. 0 for a unit alone.
        public var spreadWindow: Double

        public init(
            movingInterval: Double = 5, stationaryInterval: Double = 10, saverInterval: Double = 120,
            backoff: Backoff = Backoff(base: 1, cap: 120), heartbeatInterval: Double = 60, urgentRetryInterval: Double = 5,
            stableAfter: Double = 30, spreadWindow: Double = 0, restingInterval: Double = 600
        ) {
            self.movingInterval = movingInterval
            self.stationaryInterval = stationaryInterval
            self.saverInterval = saverInterval
            self.restingInterval = restingInterval
            self.backoff = backoff
            self.heartbeatInterval = heartbeatInterval
            self.urgentRetryInterval = urgentRetryInterval
            self.stableAfter = stableAfter
            self.spreadWindow = max(0, spreadWindow)
        }
    }

    /// What is waiting, as the runner sees it when it asks.
    public struct Backlog: Sendable, Equatable {
        public var pings: Int
        /// SOS calls, transitions, proofs, route changes and arrivals ready to go (the head of each task's
        /// queue): they go at once.
        public var items: Int
        /// Of `items`, the SOS calls: tried again at least every `urgentRetryInterval`.
        public var urgent: Int
        /// Trips, idle periods and harsh driving events ready to go: with the next batch.
        public var lowItems: Int
        /// At least one full batch of pings is waiting: send again without pausing.
        public var fullBatch: Bool
        /// The receiver's state when it has no usable fix (`noFix`, `lost`), nil when it has one.
        public var gpsWithoutFix: GPSLinkState?
        /// An item was queued since the last attempt read the queue (a driver's tap): its first send goes at once, whatever
        /// a lost request's resend waits for or the budget says.
        public var freshItems: Bool

        public init(
            pings: Int, items: Int, urgent: Int = 0, lowItems: Int = 0, fullBatch: Bool = false, gpsWithoutFix: GPSLinkState? = nil,
            freshItems: Bool = false
        ) {
            self.pings = pings
            self.items = items
            self.urgent = urgent
            self.lowItems = lowItems
            self.fullBatch = fullBatch
            self.gpsWithoutFix = gpsWithoutFix
            self.freshItems = freshItems
        }
    }

    /// How often timed records go: the van's motion and, parked, whether it saves its battery.
    public enum Cadence: Sendable, Equatable {
        case moving
        case stationary
        /// Parked with the ignition off (or on a low battery): batches, and heartbeats, one burst a `saverInterval`.
        case saver
        /// Off shift: nothing is recorded, so nothing is timed; the loop looks again every `restingInterval` (an item
        /// queued, or the shift's start, wakes its runner at once).
        case offShift
    }

    public enum Link: Sendable, Equatable {
        /// Nothing sent yet.
        case idle
        /// The last attempt went through.
        case online
        /// Transient failures: the next attempt waits until then (a flush goes at once).
        case backingOff(until: Double)
        /// The backend refused the credentials, or there are none: nothing goes until a login.
        case authRequired
    }

    public enum Action: Sendable, Equatable {
        /// Send now: items (unless held), then pings, then the heartbeat when due.
        case attempt
        /// A lost request's items go again early (the retry budget paid for it). Pings (a lost batch too, which rides with
        /// them) keep their turn and pushes wait for the next attempt.
        case resend
        /// Nothing to do before this time, unless woken.
        case wait(until: Double)
        /// Nothing goes until a login.
        case waitForLogin
        /// Stopping with the backend reachable: one more attempt for what is queued, then `finished`.
        case finalAttempt
        case finished
    }

    public enum Failure: Sendable, Equatable {
        /// No connection, a 5xx or a 429; `retryAfter`: the seconds the backend asked for, if any.
        case transient(String, retryAfter: Double? = nil)
        /// A request the link lost after it had worked (reset, closed or timed out without an answer): random loss at
        /// the edge of coverage, not an outage, unless it comes `lossesBeforeBackoff` times in a row.
        case lost(String)
        /// The backend refused the token (a 401 a refresh could not mend).
        case unauthorized(String)
        /// No token, or a login older than the limit.
        case needsLogin(String)
    }

    /// What the runner does besides waiting, after an outcome.
    public enum Effect: Sendable, Equatable {
        case none
        /// The link works for the first time, again after a minute or more down (`briefOutage`), or for a new login:
        /// fetch the route (and the release and configuration).
        case linkRestored
        /// Log in with the configured credentials, then report that login's outcome.
        case loginWithCredentials
        /// Tell front ends and the journal that the driver must log in (once per spell).
        case announceAuthRequired(String)
    }

    /// The longest wait taken from a backend's `Retry-After`: a broken or hostile answer must not silence a unit
    /// for days.
    public static let longestRetryAfter = 3600.0
    /// Lost requests in a row (no success between) that make an outage: the backoff starts.
    public static let lossesBeforeBackoff = 3
    /// The wait before a lost request's items go again while the budget lasts (seconds, jittered over this range): about
    /// a TCP retransmission timeout, so a lost transition costs the driver a second or two.
    public static let resendDelay = 0.5...2.0
    /// A link back within this (seconds) is no return worth a refetch (`Effect.linkRestored`): what changed meanwhile
    /// comes as pushes, which the push cursor catches up on. A lossy link's backoffs then cost no route, release and
    /// configuration requests each.
    public static let briefOutage = 60.0
    /// A link that lost a request or a WebSocket frame this recently (seconds) is lossy: its batches go as requests, and
    /// the WebSocket only listens. A lost request costs itself (the next batch carries the lost one), while a lost frame
    /// costs the socket too: a new upgrade, and pushes that wait for it (measured: `driverd-bench loss`).
    public static let lossyLinkHold = 120.0
    /// Retry tokens a backlog's resend (a full batch after a loss) leaves for lost items (transitions, proofs): on a link
    /// losing a third of its requests, batches' resends spent the budget and a transition's p95 was 7.5 to 8.8 s
    /// (`driverd-bench loss`).
    public static let itemsReserve = 2.0

    public let configuration: Configuration
    public private(set) var link = Link.idle
    /// The last attempt's time (a resend is not one: the pings' turn counts from an attempt that carried them).
    public private(set) var lastAttemptAt = -Double.infinity
    public private(set) var lastSuccessAt: Double?
    public private(set) var lastError: String?
    public private(set) var consecutiveFailures = 0
    /// The last backoff wait drawn (nil: none since the link was last stable): the next is drawn from it.
    public private(set) var backoffWait: Double?
    /// Early resends of lost requests: spent one an early resend, earned by successes.
    public private(set) var retryBudget = RetryBudget()
    /// The last attempt lost a request on a working link: its items go again at this time (the budget willing).
    public private(set) var resendAt: Double?
    /// Until when the link counts as lossy (`lossyLinkHold` after its last lost request).
    public private(set) var lossyUntil: Double?
    /// The backoff under way came from losses in a row (the backend is there; the link carries some of what is sent).
    public private(set) var backingOffFromLosses = false
    /// Since when the link has been up without a failure.
    private var onlineSince: Double?
    /// Since when a link that was up has been backing off (nil: up, or never up).
    private var downSince: Double?
    /// The first attempt after a start waits until then (the start's spread), unless an SOS or a flush is waiting.
    public private(set) var firstAttemptAt: Double
    /// Until when the backend asked for quiet (`Retry-After`): a flush does not cut this short, an SOS does.
    public private(set) var backendQuietUntil: Double?
    /// The driver whose queued items wait for their next login (set at logout): they go to nobody else.
    public private(set) var itemsHeldFor: String?
    private var flushRequested = false
    /// The attempt under way is a resend (`Action.resend`).
    private var resending = false
    public private(set) var isStopping = false
    private var finalAttemptMade = false
    private var authAnnounced = false
    private var credentialsTried = false
    /// A login happened: the next success restores the link even if it never looked down.
    private var restoreOnSuccess = false
    /// When a position or heartbeat last reached the backend, and the receiver state the last heartbeat told.
    private var locationSentAt: Double?
    private var heartbeatTold: GPSLinkState?

    /// `random` in [0, 1) places the first attempt in the spread window.
    public init(configuration: Configuration = Configuration(), itemsHeldFor: String? = nil, now: Double = 0, random: Double = 0) {
        self.configuration = configuration
        self.itemsHeldFor = itemsHeldFor
        locationSentAt = now
        firstAttemptAt = now + configuration.spreadWindow * min(max(random, 0), 1)
    }

    /// The time the next attempt waits for while backing off.
    public var retryAt: Double? {
        if case .backingOff(let until) = link { return until }
        return nil
    }

    public var isOnline: Bool { link == .online }

    /// Whether batches go over the WebSocket (when it is open): not on a link that lost a request lately (`lossyLinkHold`).
    public func batchesOverSocket(now: Double) -> Bool { now >= lossyUntil ?? -.infinity }

    /// Whether `driver`'s login may send the queued items (another driver's wait for theirs).
    public func itemsHeld(currentDriver driver: String?) -> Bool { itemsHeldFor.map { $0 != driver } ?? false }

    // MARK: Events

    public mutating func requestFlush() { flushRequested = true }

    public mutating func stop() { isStopping = true }

    public mutating func next(now: Double, cadence: Cadence, backlog: Backlog) -> Action {
        if isStopping {
            // The final flush: one more attempt for what is queued, unless the backend is known to be away.
            guard !finalAttemptMade, link == .online, backlog.pings + backlog.items + backlog.lowItems > 0 else { return .finished }
            finalAttemptMade = true
            return .finalAttempt
        }
        if link == .authRequired { return .waitForLogin }
        // The start's spread: nothing but an SOS or someone's flush goes before its moment.
        if link == .idle, now < firstAttemptAt, !flushRequested, backlog.urgent == 0 { return .wait(until: firstAttemptAt) }
        // A flush cuts a backoff short, never the backend's own "not now".
        if let retryAt, now < retryAt, !flushRequested || now < backendQuietUntil ?? -.infinity {
            // A driver's tap does not wait out losses in a row: the backend is there, and people pace their taps.
            if backlog.freshItems, backingOffFromLosses { return .attempt }
            // Someone may be in danger: an SOS does not wait out a long backoff.
            guard backlog.urgent > 0 else { return .wait(until: retryAt) }
            let urgentRetry = lastAttemptAt + configuration.urgentRetryInterval
            if now < min(retryAt, urgentRetry) { return .wait(until: min(retryAt, urgentRetry)) }
            return .attempt
        }
        // A lost request's items (or a backlog's full batch) go again soon while the budget lasts, else at the next turn;
        // pings, a lost batch with them, keep their turn. A fresh item is no resend: it goes below, at once.
        if let resendAt, backlog.items > 0 || backlog.fullBatch, backlog.urgent == 0, !backlog.freshItems, !flushRequested {
            // Pings alone leave the last tokens to the driver's transitions: a lost one waits for no turn.
            if backlog.items > 0 ? retryBudget.canSpend : retryBudget.canSpend(keeping: Self.itemsReserve) {
                if now < resendAt { return .wait(until: resendAt) }
                _ = retryBudget.spend()
                self.resendAt = nil
                resending = backlog.items > 0
                return resending ? .resend : .attempt
            } else if now < lastAttemptAt + interval(cadence) {
                return .wait(until: lastAttemptAt + interval(cadence))
            }
            self.resendAt = nil
            return .attempt
        }
        let timed = backlog.pings + backlog.lowItems
        let heartbeat = backlog.pings == 0 && heartbeatDue(now: now, gps: backlog.gpsWithoutFix, cadence: cadence)
        if flushRequested || restoreOnSuccess || backlog.items > 0 || backlog.fullBatch || heartbeat || retryAt != nil && timed > 0 {
            return .attempt
        }
        let interval = self.interval(cadence)
        // Nothing waits: look again one interval from now (new pings and records do not wake the uplink).
        guard timed > 0 else { return .wait(until: now + interval) }
        let due = lastAttemptAt + interval
        return now >= due ? .attempt : .wait(until: due)
    }

    /// An attempt begins: it answers the flush asked for.
    public mutating func attemptStarted() { flushRequested = false }

    public mutating func attemptSucceeded(now: Double) -> Effect {
        // An attempt that began before a logout (or before the credentials were refused): nothing goes until a login.
        guard link != .authRequired else { return .none }
        let restored = restoreOnSuccess || link != .online && now - (downSince ?? -.infinity) >= Self.briefOutage
        downSince = nil
        if !resending { lastAttemptAt = now }
        resending = false
        lastSuccessAt = now
        lastError = nil
        consecutiveFailures = 0
        backendQuietUntil = nil
        resendAt = nil
        credentialsTried = false
        restoreOnSuccess = false
        if link != .online || onlineSince == nil { onlineSince = now }
        // One step back down per success (the inverse of a failure's step up): a patchy link that gets through half
        // the time stays near the base, while a backend that answers once between refusals keeps the fleet's waits long.
        backoffWait = configuration.backoff.stepDown(from: backoffWait)
        link = .online
        return restored ? .linkRestored : .none
    }

    /// `random` in [0, 1) picks the jittered delay; `hasCredentials`: configured ones may be tried once.
    public mutating func attemptFailed(_ failure: Failure, now: Double, random: Double, hasCredentials: Bool) -> Effect {
        // An attempt that began before a logout: its outcome neither backs off nor logs in with the configured credentials.
        guard link != .authRequired else { return .none }
        if !resending { lastAttemptAt = now }
        resending = false
        resendAt = nil
        switch failure {
        case .lost(let reason):
            consecutiveFailures += 1
            lossyUntil = now + Self.lossyLinkHold
            // A link that was up lost a request: resent soon, not backed off. Losses in a row, or on a link not up yet,
            // back off, but no longer than a batch interval: a lost request found a connection, so the backend is there
            // and the link carries some of what is sent (an outage refuses, or answers 5xx, and backs off to the cap).
            guard link == .online, consecutiveFailures < Self.lossesBeforeBackoff else {
                backOff(reason, retryAfter: nil, now: now, random: random, cap: max(configuration.backoff.base, configuration.stationaryInterval))
                backingOffFromLosses = true
                return .none
            }
            lastError = reason
            resendAt = now + Self.resendDelay.lowerBound + (Self.resendDelay.upperBound - Self.resendDelay.lowerBound) * min(max(random, 0), 1)
            return .none
        case .transient(let reason, let retryAfter):
            consecutiveFailures += 1
            backOff(reason, retryAfter: retryAfter, now: now, random: random)
            return .none
        case .unauthorized(let reason), .needsLogin(let reason):
            if hasCredentials, !credentialsTried {
                credentialsTried = true
                return .loginWithCredentials
            }
            return requireLogin(reason)
        }
    }

    /// Waits out a failure: the backend's Retry-After if it gave one, else the next step of the decorrelated backoff.
    private mutating func backOff(_ reason: String, retryAfter: Double?, now: Double, random: Double, cap: Double = .infinity) {
        lastError = reason
        backingOffFromLosses = false
        // A link that stayed up a while was fine: this failure starts the backoff again.
        if let onlineSince, now - onlineSince >= configuration.stableAfter { backoffWait = nil }
        onlineSince = nil
        if link == .online { downSince = now }
        guard let retryAfter else {
            backendQuietUntil = nil
            let wait = min(configuration.backoff.next(after: backoffWait, random: random), cap)
            backoffWait = wait
            link = .backingOff(until: now + wait)
            return
        }
        // The backend's wait first (at most longestRetryAfter), then a random share of the fleet's spread window (at
        // least the backoff's base): a fleet told the same wait does not come back in the same instant, and units
        // refused together do not crowd the seconds right after their slots (measured: `driverd-bench fleet`).
        let asked = min(max(retryAfter, 0), Self.longestRetryAfter)
        backendQuietUntil = now + asked
        link = .backingOff(until: now + asked + max(configuration.spreadWindow, configuration.backoff.base) * min(max(random, 0), 1))
    }

    /// A request of the attempt under way went through (an item, a batch): the link carries requests, so a loss later
    /// in the same attempt is not one more in a row, and the retry budget earns its share.
    public mutating func requestDelivered() {
        consecutiveFailures = 0
        retryBudget.earn()
    }

    /// A login (the driver's or the configured credentials') went through.
    public mutating func loggedIn(driver: String) {
        if itemsHeldFor == driver { itemsHeldFor = nil }
        if link == .authRequired || retryAt != nil { link = lastSuccessAt == nil ? .idle : .online }
        consecutiveFailures = 0
        authAnnounced = false
        restoreOnSuccess = true
        // Someone logged in: their session goes now, not at the start's spread (logins are paced by people).
        firstAttemptAt = -.infinity
    }

    /// The unit has a new certificate (enrolled, renewed): every wait that was about the old one ends, the backend's
    /// hour for a unit without one included; what is queued goes now (the start's spread still holds).
    public mutating func identityChanged() {
        backendQuietUntil = nil
        resendAt = nil
        if retryAt != nil { link = lastSuccessAt == nil ? .idle : .online }
        flushRequested = true
    }

    /// The configured credentials were refused too (or could not be tried).
    public mutating func credentialsFailed(_ reason: String) -> Effect { requireLogin(reason) }

    /// The driver logged out: nothing goes until the next login, and their queued items wait for them.
    public mutating func loggedOut(driver: String?) {
        if let driver { itemsHeldFor = driver }
        link = .authRequired
        lastError = "logged out: log in again"
        authAnnounced = true
    }

    // MARK: Heartbeat

    /// While the receiver has no usable fix, the backend must hear so: at once when that state is new, then
    /// once per heartbeat interval without a position.
    /// The batch interval of `cadence`: what the backend is told as the time its next report is due within.
    public func interval(_ cadence: Cadence) -> Double {
        switch cadence {
        case .moving: configuration.movingInterval
        case .stationary: configuration.stationaryInterval
        case .saver: configuration.saverInterval
        case .offShift: configuration.restingInterval
        }
    }

    /// In saver mode a heartbeat waits for the saver's burst as pings do (a receiver that changed state is told at once).
    public func heartbeatDue(now: Double, gps: GPSLinkState?, cadence: Cadence = .stationary) -> Bool {
        guard let gps else { return false }
        let every = cadence == .saver ? max(configuration.heartbeatInterval, configuration.saverInterval) : configuration.heartbeatInterval
        return heartbeatTold != gps || now - (locationSentAt ?? -.infinity) >= every
    }

    /// Pings reached the backend (a heartbeat will tell the next spell without a fix anew).
    public mutating func pingsSent(now: Double) {
        locationSentAt = now
        heartbeatTold = nil
    }

    public mutating func heartbeatSent(now: Double, gps: GPSLinkState) {
        locationSentAt = now
        heartbeatTold = gps
    }

    private mutating func requireLogin(_ reason: String) -> Effect {
        lastError = "the backend refused the credentials (401): log in again"
        link = .authRequired
        guard !authAnnounced else { return .none }
        authAnnounced = true
        return .announceAuthRequired(reason)
    }
}
