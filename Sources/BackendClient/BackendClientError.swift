import BackendContract

/// Why a backend request failed, sorted into the classes the uplink treats differently.
public struct BackendClientError: Error, Sendable, CustomStringConvertible {
    public enum Class: Sendable, Equatable {
        /// No answer (refused, reset, timeout, TLS) or a 5xx: retry with backoff.
        case transient
        /// 401: refresh the token or log in again.
        case unauthorized
        /// Any other 4xx (409, 422 …): the backend will never take this request; dead-letter it.
        case refused
    }

    public let errorClass: Class
    /// The HTTP status, when there was an answer.
    public let status: Int?
    /// The contract's error body, when the answer had one.
    public let body: BackendErrorBody?
    public let rawBody: String
    public let reason: String

    /// An answer with an error status (a stand-in backend in tests answers like the server does).
    public init(status: Int, rawBody: String, body: BackendErrorBody?) {
        self.status = status
        self.rawBody = rawBody
        self.body = body
        errorClass = switch status {
        case 401: .unauthorized
        case 400..<500: .refused
        default: .transient
        }
        reason = "HTTP \(status)" + (body.map { " \($0.error.code.rawValue): \($0.error.message)" } ?? "")
    }

    /// A failure without an answer worth keeping (an ack that does not match, say): retried.
    public init(transportReason: String) {
        errorClass = .transient
        status = nil
        body = nil
        rawBody = ""
        reason = transportReason
    }

    /// A request that can never be made (its queued content is unreadable): dead-lettered like a refusal.
    public init(refusedLocally reason: String) {
        errorClass = .refused
        status = nil
        body = nil
        rawBody = ""
        self.reason = reason
    }

    init(transport error: any Error) {
        errorClass = .transient
        status = nil
        body = nil
        rawBody = ""
        reason = "\(error)"
    }

    public var description: String { reason }
}
