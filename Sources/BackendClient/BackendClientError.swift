import AsyncHTTPClient
import BackendContract
import NIOCore
import NIOSSL
#if canImport(Glibc)
import Glibc
#endif

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
    /// The request went out on a connection and no answer came (reset, closed, timed out): the link lost it, as a link
    /// at the edge of coverage does. False for no connection at all (refused, DNS, TLS, a connect timeout) and for an answer.
    public let isLostRequest: Bool

    /// The wait after an answer that this unit's certificate is revoked, or that it has none the backend takes
    /// (seconds): a person must act, or a certificate be issued, which ends the wait (`Uplink.identityChanged`).
    public static let revokedWait = 3600.0

    /// An answer with an error status (a stand-in backend in tests answers like the server does).
    public init(status: Int, rawBody: String, body: BackendErrorBody?, retryAfter: Double? = nil) {
        self.status = status
        self.rawBody = rawBody
        self.body = body
        isLostRequest = false
        // A revoked unit, or one without a certificate the backend takes (a wrong or used-up claim token, none at all),
        // does not knock hot: an hour between tries, as if the backend had said so (an SOS excepted). Its requests could
        // only be refused; an enrolment or renewal that goes through ends the wait.
        let withoutIdentity = status == 403 && (body?.error.code == .unitRevoked || body?.error.code == .certificateRequired)
        self.retryAfter = withoutIdentity ? max(retryAfter ?? 0, Self.revokedWait) : retryAfter
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

    /// A failure without an answer worth keeping (an ack that does not match, say): retried. `lost`: the request went
    /// out on a connection that then failed without an answer (a WebSocket frame whose socket closed, or whose ack never
    /// came), as `lostRequest` judges a transport error.
    public init(transportReason: String, lost: Bool = false) {
        errorClass = .transient
        status = nil
        body = nil
        rawBody = ""
        reason = transportReason
        retryAfter = nil
        isLostRequest = lost
    }

    /// A request that can never be made (its queued content is unreadable): dead-lettered like a refusal.
    public init(refusedLocally reason: String) {
        errorClass = .refused
        status = nil
        body = nil
        rawBody = ""
        self.reason = reason
        retryAfter = nil
        isLostRequest = false
    }

    init(transport error: any Error) {
        errorClass = .transient
        status = nil
        body = nil
        rawBody = ""
        reason = "\(error)"
        retryAfter = nil
        isLostRequest = Self.lostRequest(error)
    }

    /// Whether `error` says a connection carried the request and then failed (not that none could be made).
    static func lostRequest(_ error: any Error) -> Bool {
        switch error {
        case let error as HTTPClientError:
            return [.remoteConnectionClosed, .readTimeout, .writeTimeout, .deadlineExceeded].contains(error)
        case let error as IOError:
            return [ECONNRESET, EPIPE, ETIMEDOUT].contains(error.errnoCode)
        case let error as ChannelError:
            return error == .eof || error == .ioOnClosedChannel || error == .outputClosed
        case let error as NIOSSLError:
            // A TLS connection closed without TLS's own goodbye: the peer or the path dropped it mid-request.
            return error == .uncleanShutdown
        default:
            return false
        }
    }

    public var description: String { reason }
}
