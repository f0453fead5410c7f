import DriverAPI
import BackendContract

/// What became of a status update; the HTTP layer maps each case to one answer.
public enum StatusOutcome: Codable, Sendable, Equatable {
    case applied(StatusAccepted)
    /// 409 with the task as the backend has it.
    case invalidTransition(RiderTask)
    /// 409: `DELIVERED` before an accepted proof of delivery.
    case podRequired(RiderTask)
    /// 422: the key was used with another body.
    case keyReused
    case notFound
}

/// What became of a proof of delivery.
public enum PODOutcome: Codable, Sendable, Equatable {
    case accepted(PODReceipt)
    /// 400; the driver may try `attemptsLeft` more times.
    case otpWrong(attemptsLeft: Int)
    /// 429: too many wrong codes.
    case otpLocked
    /// 409: an OTP for a photo task or the other way round.
    case typeMismatch(RiderTask)
    /// 409: the task is not at a stage where it can be proved delivered.
    case notDeliverable(RiderTask)
    /// 422: the key was used with another body.
    case keyReused
    case notFound
}

/// A photo proof as the HTTP layer received and checked it.
public struct PhotoProof: Codable, Sendable, Equatable {
    public var sha256: String
    public var bytes: Int
    /// Where it was taken, when the device had a fix.
    public var lat: Double?
    public var lng: Double?
    public var timestamp: Double
    /// Where the client's stamp came from, when it said.
    public var timeSource: TimeSource?
    public init(sha256: String, bytes: Int, lat: Double?, lng: Double?, timestamp: Double, timeSource: TimeSource? = nil) {
        self.timeSource = timeSource
        self.sha256 = sha256
        self.bytes = bytes
        self.lat = lat
        self.lng = lng
        self.timestamp = timestamp
    }
}

/// Why a dispatcher or driver change was refused.
public struct SimRefusal: Error, Sendable, Equatable {
    public var code: BackendErrorCode
    public var message: String
    public init(_ code: BackendErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }
}
