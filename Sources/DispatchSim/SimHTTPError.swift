import BackendContract
import DispatchSimCore
import HTTPTypes
import Hummingbird

/// Every error answer of the reference backend, in the contract's `{"error": {...}}` form: the one place
/// where a code becomes an HTTP status.
struct SimHTTPError: HTTPResponseError {
    let detail: BackendErrorBody.Detail
    var headers: HTTPFields = [:]
    /// An injected fault answers with the status it was told to.
    var statusOverride: Int?

    /// `replayed`: this refusal repeats the first answer to an idempotency key (marked as such).
    init(_ code: BackendErrorCode, _ message: String, task: RiderTask? = nil, attemptsLeft: Int? = nil, replayed: Bool = false) {
        detail = .init(code: code, message: message, task: task, attemptsLeft: attemptsLeft)
        if replayed { headers = Self.replayHeaders }
    }

    static let replayHeaders: HTTPFields = [.idempotentReplayed: "true"]

    init(_ refusal: SimRefusal) {
        detail = .init(code: refusal.code, message: refusal.message)
    }

    var status: HTTPResponse.Status { .init(code: statusOverride ?? detail.code.httpStatus) }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        try SimJSON.response(BackendErrorBody(detail), status: status, headers: headers)
    }
}

extension HTTPField.Name {
    static let idempotencyKey = Self(BackendPaths.idempotencyKeyHeader)!
    static let idempotentReplayed = Self(BackendPaths.idempotentReplayHeader)!
    static let pushCatchUp = Self(BackendPaths.pushCatchUpHeader)!
}
