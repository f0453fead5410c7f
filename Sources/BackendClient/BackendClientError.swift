import BackendContract

/// Why a backend request failed, sorted into the classes the uplink treats differently.
public struct BackendClientError: Error, Sendable, CustomStringConvertible {
    public enum Class: Sendable, Equatable {
        /// No answer (refused, reset, timeout, TLS), a 5xx, or "not now" (429, 408): retry with backoff, and
        /// not before `retryAfter`.
        case transient
        /// 401: refresh the token or log in again.
        case unauthorized
        /// Any other 4xx (409, 422 …): the backend will never take this request; dead-letter it. (A 429 is never
        /// this: a busy backend must not cost a driver a change.)
        case refused
    }

    public let errorClass: Class
    /// The HTTP status, when there was an answer.
    public let status: Int?
    /// The contract's error body, when the answer had one.
    public let body: BackendErrorBody?
    public let rawBody: String
    public let reason: String
    /// Seconds the backend asked this unit to wait (`Retry-After` on a 429 or 503), nil when it said nothing usable.
    public let retryAfter: Double?

    /// The wait after an answer that this unit's certificate is revoked (seconds).
    public static let revokedWait = 3600.0

    /// An answer with an error status (a stand-in backend in tests answers like the server does).
    public init(status: Int, rawBody: String, body: BackendErrorBody?, retryAfter: Double? = nil) {
        self.status = status
        self.rawBody = rawBody
        self.body = body
        // A revoked unit does not knock hot: an hour between tries, as if the backend had said so (an SOS excepted).
        self.retryAfter = status == 403 && body?.error.code == .unitRevoked ? max(retryAfter ?? 0, Self.revokedWait) : retryAfter
        errorClass = switch status {
        case 401: .unauthorized
        // A code locked by wrong guesses is the contract's one 429 that means "never" for this request.
        case 429 where body?.error.code == .otpLocked: .refused
        // The unit is not enrolled (yet), or its certificate was revoked: nothing wrong with the request, which waits
        // for a certificate (a revoked unit for an hour at a time: `retryAfter`).
        case 403 where body?.error.code == .certificateRequired || body?.error.code == .unitRevoked: .transient
        // Too many requests, and a request the server gave up waiting for: "not now", never "never".
        case 408, 429: .transient
        case 400..<500: .refused
        default: .transient
        }
        reason = "HTTP \(status)" + (body.map { " \($0.error.code.rawValue): \($0.error.message)" } ?? "")
            + (self.retryAfter.map { " (retry after \(Int($0.rounded(.up))) s)" } ?? "")
    }

    /// A failure without an answer worth keeping (an ack that does not match, say): retried.
    public init(transportReason: String) {
        errorClass = .transient
        status = nil
        body = nil
        rawBody = ""
        reason = transportReason
        retryAfter = nil
    }

    /// A request that can never be made (its queued content is unreadable): dead-lettered like a refusal.
    public init(refusedLocally reason: String) {
        errorClass = .refused
        status = nil
        body = nil
        rawBody = ""
        self.reason = reason
        retryAfter = nil
    }

    init(transport error: any Error) {
        errorClass = .transient
        status = nil
        body = nil
        rawBody = ""
        reason = "\(error)"
        retryAfter = nil
    }

    public var description: String { reason }
}
