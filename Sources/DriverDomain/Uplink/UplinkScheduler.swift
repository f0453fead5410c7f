import DriverAPI

/// When the uplink sends, pure: batches every 5 s moving and 10 s stationary, at once when a transition or
/// proof waits, a full batch is ready or a flush is asked for; after a network error or a 5xx, exponential
/// backoff with full jitter (`Backoff`, 1 s to 5 min); after a 401, nothing until the driver logs in again.
///
/// A runner asks `next` and does what it says; it reports each attempt with `succeeded` or `failed`.
public struct UplinkScheduler: Sendable, Equatable {
    public struct Configuration: Sendable, Equatable {
        public var movingInterval: Double
        public var stationaryInterval: Double
        public var backoff: Backoff

        public init(movingInterval: Double = 5, stationaryInterval: Double = 10, backoff: Backoff = Backoff(base: 1, cap: 300)) {
            self.movingInterval = movingInterval
            self.stationaryInterval = stationaryInterval
            self.backoff = backoff
        }
    }

    /// What is waiting, as the runner sees it when it asks.
    public struct Backlog: Sendable, Equatable {
        public var pings: Int
        /// Transitions and proofs of delivery ready to go (the head of each task's queue).
        public var items: Int
        /// At least one full batch of pings is waiting: send again without pausing.
        public var fullBatch: Bool
        /// No position went out for a while and the receiver has no usable fix: the backend must hear so.
        public var heartbeatDue: Bool

        public init(pings: Int, items: Int, fullBatch: Bool = false, heartbeatDue: Bool = false) {
            self.pings = pings
            self.items = items
            self.fullBatch = fullBatch
            self.heartbeatDue = heartbeatDue
        }
    }

    public enum Action: Sendable, Equatable {
        case send
        /// Nothing to do before this time (the runner's clock: driverd uses the monotonic one), unless woken.
        case wait(until: Double)
        /// The backend refused our credentials: wait for a login.
        case authRequired
    }

    public enum Failure: Sendable, Equatable {
        /// A network error, a timeout or a 5xx: retried with backoff.
        case transient(String)
        /// A 401 the token refresh could not mend.
        case unauthorized
    }

    /// `disabled` is never the scheduler's: it means no backend (and so no scheduler).
    public typealias LinkState = UplinkLink

    public let configuration: Configuration
    public private(set) var lastAttemptAt = -Double.infinity
    public private(set) var lastSuccessAt: Double?
    public private(set) var lastError: String?
    public private(set) var consecutiveFailures = 0
    public private(set) var retryAt: Double?
    public private(set) var authPaused = false

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    public var linkState: LinkState {
        if authPaused { return .authRequired }
        if retryAt != nil { return .backingOff }
        return lastSuccessAt == nil ? .idle : .online
    }

    public func next(now: Double, moving: Bool, backlog: Backlog, flushRequested: Bool) -> Action {
        if authPaused { return .authRequired }
        if let retryAt, now < retryAt, !flushRequested { return .wait(until: retryAt) }
        if flushRequested || backlog.items > 0 || backlog.fullBatch || backlog.heartbeatDue || retryAt != nil && backlog.pings > 0 { return .send }
        let interval = moving ? configuration.movingInterval : configuration.stationaryInterval
        // Nothing waits: look again one interval from now (new pings do not wake the uplink).
        guard backlog.pings > 0 else { return .wait(until: now + interval) }
        let due = lastAttemptAt + interval
        return now >= due ? .send : .wait(until: due)
    }

    public mutating func succeeded(now: Double) {
        lastAttemptAt = now
        lastSuccessAt = now
        lastError = nil
        consecutiveFailures = 0
        retryAt = nil
    }

    /// Records a failed attempt; `random` in [0, 1) picks the jittered delay.
    public mutating func failed(_ failure: Failure, now: Double, random: Double) -> Action {
        lastAttemptAt = now
        switch failure {
        case .transient(let reason):
            lastError = reason
            let until = now + configuration.backoff.delay(attempt: consecutiveFailures, random: random)
            consecutiveFailures += 1
            retryAt = until
            return .wait(until: until)
        case .unauthorized:
            lastError = "the backend refused the credentials (401): log in again"
            authPaused = true
            return .authRequired
        }
    }

    /// New credentials: try again at once.
    public mutating func authRestored() {
        authPaused = false
        retryAt = nil
        consecutiveFailures = 0
    }
}
