import BackendClient
import BackendContract

/// The backend's "no" to a request, as the workflow needs it: what it said and, for a task, the state it has
/// the task in. Read from the HTTP answer here, once, so the workflow never reads error bodies.
struct BackendRefusal: Sendable, Equatable {
    /// The HTTP status, when there was an answer.
    var status: Int?
    var code: BackendErrorCode?
    var message: String
    /// The backend's own state of the task (its 409 answers carry it).
    var task: RiderTask?
    /// Wrong codes still allowed (an OTP refusal).
    var attemptsLeft: Int?

    init(_ error: BackendClientError) {
        status = error.status
        code = error.body?.error.code
        message = error.body?.error.message ?? error.reason
        task = error.body?.error.task
        attemptsLeft = error.body?.error.attemptsLeft
    }
}
