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

// MARK: Methods

extension Methods {
    public static let outboxStatus = Method<NoParams, OutboxStatus>("outbox.status", mutating: false, screen: true)
    /// Sends what waits now (overriding a backoff) and answers once that attempt is over.
    public static let outboxFlush = Method<NoParams, OutboxStatus>("outbox.flush", mutating: true)

    /// This file's methods, in `Methods.all`.
    static let outbox: [MethodDescriptor] = [outboxStatus.descriptor, outboxFlush.descriptor]
}
