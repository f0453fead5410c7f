import BackendClient
import BackendContract
import Testing

@Suite("Backend answers: what a failure means for the queued item")
struct BackendClientErrorTests {
    static func body(_ code: BackendErrorCode) -> BackendErrorBody { BackendErrorBody(.init(code: code, message: "m")) }

    @Test("429 and 408 are \"not now\" (retried, with the backend's wait), never a dead letter; OTP_LOCKED is the one 429 that refuses; 409 refuses; 503 retries")
    func classes() {
        let busy = BackendClientError(status: 429, rawBody: "", body: nil, retryAfter: 30)
        #expect(busy.errorClass == .transient && busy.retryAfter == 30 && busy.reason == "HTTP 429 (retry after 30 s)")
        #expect(BackendClientError(status: 408, rawBody: "", body: nil).errorClass == .transient)
        #expect(BackendClientError(status: 429, rawBody: "", body: Self.body(.otpLocked)).errorClass == .refused)
        #expect(BackendClientError(status: 409, rawBody: "", body: nil).errorClass == .refused)
        #expect(BackendClientError(status: 503, rawBody: "", body: nil, retryAfter: 2.5).errorClass == .transient)
        #expect(BackendClientError(status: 401, rawBody: "", body: nil).errorClass == .unauthorized)
    }
}
