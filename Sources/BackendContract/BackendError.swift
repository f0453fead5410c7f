/// Every error answer of the backend: `{"error": {...}}` with a stable code.
public struct BackendErrorBody: Codable, Sendable, Equatable {
    public struct Detail: Codable, Sendable, Equatable {
        public var code: BackendErrorCode
        public var message: String
        /// The backend's current state of the task (409 answers).
        public var task: RiderTask?
        /// Wrong OTP entries still allowed.
        public var attemptsLeft: Int?

        public init(code: BackendErrorCode, message: String, task: RiderTask? = nil, attemptsLeft: Int? = nil) {
            self.code = code
            self.message = message
            self.task = task
            self.attemptsLeft = attemptsLeft
        }
    }

    public var error: Detail
    public init(_ error: Detail) { self.error = error }
}

/// The error codes of the contract, with the HTTP status each one comes with.
public enum BackendErrorCode: String, Codable, Sendable, Equatable, CaseIterable {
    case badRequest = "BAD_REQUEST"
    case invalidCredentials = "INVALID_CREDENTIALS"
    case unauthorized = "UNAUTHORIZED"
    case tokenExpired = "TOKEN_EXPIRED"
    case notFound = "NOT_FOUND"
    case idempotencyKeyMissing = "IDEMPOTENCY_KEY_MISSING"
    case idempotencyKeyReused = "IDEMPOTENCY_KEY_REUSED"
    case invalidTransition = "INVALID_TRANSITION"
    case podRequired = "POD_REQUIRED"
    case podTypeMismatch = "POD_TYPE_MISMATCH"
    case otpInvalid = "OTP_INVALID"
    case otpLocked = "OTP_LOCKED"
    case unsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
    case checksumMismatch = "CHECKSUM_MISMATCH"
    case payloadTooLarge = "PAYLOAD_TOO_LARGE"
    case invalidSequence = "INVALID_SEQUENCE"
    case upgradeRequired = "UPGRADE_REQUIRED"
    case injectedFault = "INJECTED_FAULT"
    /// The backend takes no more now: come back after `Retry-After` (429).
    case overloaded = "OVERLOADED"
    /// The backend is down for a while and still answers (503 with `Retry-After`).
    case unavailable = "UNAVAILABLE"
    case internalError = "INTERNAL_ERROR"
    /// Enrolment: the claim token is unknown or used up.
    case claimRefused = "CLAIM_REFUSED"
    /// A request without a certificate the fleet's CA issued, on a backend that asks for one: the unit is not
    /// enrolled (yet). Never a verdict on the request itself.
    case certificateRequired = "CERTIFICATE_REQUIRED"
    /// The fleet revoked this unit's certificate: nothing it sends is taken until it is enrolled again.
    case unitRevoked = "UNIT_REVOKED"
    /// A renewal for the same key, when the fleet wants this unit on a new one: renew again with a new key, the CSR
    /// signed by the old one too (`RenewalRequest.previousKeySignature`).
    case keyRotationRequired = "KEY_ROTATION_REQUIRED"

    public var httpStatus: Int {
        switch self {
        case .badRequest, .idempotencyKeyMissing, .otpInvalid: 400
        case .invalidCredentials, .unauthorized, .tokenExpired: 401
        case .claimRefused, .certificateRequired, .unitRevoked: 403
        case .notFound: 404
        case .invalidTransition, .podRequired, .podTypeMismatch, .keyRotationRequired: 409
        case .payloadTooLarge: 413
        case .unsupportedMediaType: 415
        case .idempotencyKeyReused, .checksumMismatch, .invalidSequence: 422
        case .upgradeRequired: 426
        case .otpLocked, .overloaded: 429
        case .internalError: 500
        case .injectedFault, .unavailable: 503
        }
    }
}
