/// Result of `outbox.status` (and `outbox.flush`): what waits for the backend and how the link is.
public struct OutboxStatus: Codable, Sendable, Equatable {
    /// False when no backend is configured (nothing is sent; pings still accumulate).
    public var enabled: Bool
    /// The backend's base URL.
    public var backend: String?
    /// `idle` (nothing sent yet), `online`, `backingOff`, `authRequired` or `disabled`.
    public var link: UplinkLink
    /// `websocket` while the backend's WebSocket is open, else `https` (batches by POST, pushes by polling);
    /// `none` without a backend.
    public var transport: UplinkTransport
    public var transitions: Int
    public var proofs: Int
    /// New stop orders waiting for the backend (API 1.6).
    public var routeChanges: Int?
    /// Visits to stops, trips and idle periods waiting for the backend (API 1.7).
    public var activity: Int?
    /// SOS calls not yet acknowledged by the backend (API 1.8).
    public var sos: Int?
    public var pings: Int
    /// Items the backend refused (409/422 …), kept with its answer.
    public var deadLetters: Int
    public var oldestPendingAgeSeconds: Double?
    /// Unix seconds of the last acked request.
    public var lastSuccess: Double?
    public var lastError: String?
    /// Seconds until the next attempt while backing off.
    public var retryInSeconds: Double?
    /// The driver the stored token belongs to; nil before a login.
    public var driverId: String?
    /// The language the driver's profile at the backend names (a BCP 47 tag such as `pt-BR`), for the screen and
    /// the voice; nil when the profile has none or before a login (API 1.15).
    public var driverLanguage: String?

    /// Transitions, proofs, route changes, activity records and SOS calls: what is never dropped.
    public var items: Int { transitions + proofs + (routeChanges ?? 0) + (activity ?? 0) + (sos ?? 0) }

    public init(
        enabled: Bool, backend: String?, link: UplinkLink, transport: UplinkTransport, transitions: Int, proofs: Int, pings: Int,
        deadLetters: Int, oldestPendingAgeSeconds: Double?, lastSuccess: Double?, lastError: String?,
        retryInSeconds: Double?, driverId: String?, routeChanges: Int? = nil, activity: Int? = nil, sos: Int? = nil,
        driverLanguage: String? = nil
    ) {
        self.driverLanguage = driverLanguage
        self.routeChanges = routeChanges
        self.activity = activity
        self.sos = sos
        self.enabled = enabled
        self.backend = backend
        self.link = link
        self.transport = transport
        self.transitions = transitions
        self.proofs = proofs
        self.pings = pings
        self.deadLetters = deadLetters
        self.oldestPendingAgeSeconds = oldestPendingAgeSeconds
        self.lastSuccess = lastSuccess
        self.lastError = lastError
        self.retryInSeconds = retryInSeconds
        self.driverId = driverId
    }
}

/// Params of the `auth.required` notification.
public struct AuthRequiredEvent: Codable, Sendable, Equatable {
    public var reason: String
    public init(reason: String) { self.reason = reason }
}

/// Params of the `outbox.refused` notification.
public struct OutboxRefusedEvent: Codable, Sendable, Equatable {
    public var taskId: String
    /// `status`, `pod_otp` or `pod_photo`.
    public var kind: String
    public var idempotencyKey: String
    /// The backend's HTTP status.
    public var status: Int
    /// The backend's answer (its error body).
    public var answer: String

    public init(taskId: String, kind: String, idempotencyKey: String, status: Int, answer: String) {
        self.taskId = taskId
        self.kind = kind
        self.idempotencyKey = idempotencyKey
        self.status = status
        self.answer = answer
    }
}

/// An item the backend refused for good (a dead letter): kept with its answer, never sent again.
public struct DeadLetter: Codable, Sendable, Equatable {
    public var taskId: String
    /// The outbox kind: `status`, `pod_otp`, `visit`, `config_ack`…
    public var kind: String
    public var idempotencyKey: String
    /// The backend's answer (its error body), or why the unit could no longer send the item.
    public var answer: String
    /// When it was refused (Unix seconds, the daemon's trusted time).
    public var refusedAt: Double?

    public init(taskId: String, kind: String, idempotencyKey: String, answer: String, refusedAt: Double?) {
        self.taskId = taskId
        self.kind = kind
        self.idempotencyKey = idempotencyKey
        self.answer = answer
        self.refusedAt = refusedAt
    }
}

/// Result of `outbox.deadLetters`.
public struct DeadLetterList: Codable, Sendable, Equatable {
    /// The newest first, at most `DeadLetterList.shown`.
    public var items: [DeadLetter]
    /// Every dead letter kept (`outbox.status`'s `deadLetters`).
    public var total: Int
    public static let shown = 50

    public init(items: [DeadLetter], total: Int) {
        self.items = items
        self.total = total
    }
}

// MARK: Methods

extension Methods {
    /// driverctl: `driverctl queue`.
    ///
    /// Params: none. Result: what waits for the backend and how the link is:
    ///
    /// ```json
    /// {"enabled": true, "backend": "https://fleet.example.com", "link": "online", "transport": "https",
    ///  "transitions": 0, "proofs": 0, "pings": 12, "deadLetters": 0, "oldestPendingAgeSeconds": 4.2,
    ///  "lastSuccess": 1795852800.5, "lastError": null, "retryInSeconds": null, "driverId": "drv-1"}
    /// ```
    ///
    /// `transport` is `websocket` while batches go over the backend's WebSocket, else `https`: batches by POST, pushes
    /// polled every 30 s while the socket is closed (on a link that lost a request in the last 2 minutes the socket,
    /// open, only listens). `link` is `idle` (nothing sent yet), `online`, `backingOff` (after a network
    /// error or a 5xx; `retryInSeconds` says when), `authRequired` (the backend refused the credentials: log in) or
    /// `disabled` (no `backend.url`). `deadLetters` counts the items the backend refused (409/422, any kind): each
    /// kept with its answer (`outbox.deadLetters`), never resent. Since API 1.6 `routeChanges`, 1.7 `activity` (visits, trips, idle periods, harsh
    /// driving events) and 1.8 `sos` (SOS calls not yet acknowledged) count those items. Since API 1.15
    /// `driverLanguage`: the language the driver's profile at the backend names (a BCP 47 tag such as `pt-BR`, from the
    /// login's answer), absent when the profile has none; the screen and its voice start in it (docs/KIOSK.md,
    /// "Languages").
    ///
    /// What goes when: an SOS first, then transitions, proofs, route changes and arrivals, at once (while a ping
    /// backlog drains, they go before its next batch of 500); trips, idle periods and harsh driving events with the
    /// next ping batch (every `uplink.moving_batch_seconds` moving, `uplink.stationary_batch_seconds` stationary,
    /// `uplink.saver_batch_seconds` parked with the ignition off: docs/OPERATIONS.md, "A parked van and a van
    /// overnight"). An SOS not yet acknowledged is sent again at least every `uplink.urgent_retry_seconds` (5),
    /// whatever the backoff and whatever `Retry-After` the backend asked for (someone may be in danger: a 429 never
    /// holds an SOS back longer than that), and is never kept as a dead letter: a refusal is tried again.
    ///
    /// While the backend is away, attempts back off with decorrelated jitter from 1 s up to `uplink.retry_cap_seconds`
    /// (120), and `retryInSeconds` says when the next goes; the backoff starts again only after the link has stayed up
    /// 30 s. A 429 or 503 with `Retry-After`, on a request or on the WebSocket's upgrade, is waited out first: nothing
    /// but an SOS goes meanwhile, and `outbox.flush` does not cut it short. In a fleet, `uplink.fleet_size` /
    /// `uplink.backend_connect_rate` seconds is the window over which a unit spreads its first attempt after a start
    /// and its return after a `Retry-After`.
    public static let outboxStatus = Method<NoParams, OutboxStatus>("outbox.status", mutating: false, screen: true)

    /// Sends what waits now (overriding a backoff) and answers once that attempt is over.
    ///
    /// driverctl: `driverctl sync`.
    ///
    /// **Mutating.** Params: none. Sends what waits now, even during a backoff (but not before a `Retry-After` the
    /// backend gave is over: a flush waits for it), and answers once that attempt is over
    /// with the same result as `outbox.status`. `unavailable` (1002) without a backend.
    public static let outboxFlush = Method<NoParams, OutboxStatus>("outbox.flush", mutating: true)

    /// driverctl: `driverctl dead-letters`.
    ///
    /// Since API 1.17. Params: none. Result: what the backend refused for good, newest first (at most 50), each with
    /// the backend's answer, and how many are kept in all:
    ///
    /// ```json
    /// {"items": [{"taskId": "task-1001", "kind": "status", "idempotencyKey": "9b1c…", "refusedAt": 1795852800.5,
    ///   "answer": "{\"error\":{\"code\":\"INVALID_TRANSITION\",\"message\":\"task-1001 is CANCELLED\"}}"}], "total": 1}
    /// ```
    ///
    /// A dead letter is never resent (the `outbox.refused` notification announced it); this is where an operator
    /// reads why, on the unit, without the journal. `kind` is the outbox kind (`status`, `pod_otp`, `pod_photo`, `route`,
    /// `visit`, `trip`, `idle`, `harsh`, `config_ack`, `update_ack`, `fleet_ack`, `diag_chunk`, `vehicle`).
    public static let outboxDeadLetters = Method<NoParams, DeadLetterList>("outbox.deadLetters", mutating: false, since: 17)

    /// This file's methods, in `Methods.all`.
    static let outbox: [MethodDescriptor] = [outboxStatus.descriptor, outboxFlush.descriptor, outboxDeadLetters.descriptor]
}
