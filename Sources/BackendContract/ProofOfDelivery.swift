import DriverAPI

/// `POST /api/v1/rider/tasks/{taskId}/pod` as JSON: the customer's code. (A photo is sent as
/// multipart/form-data with the parts named in `PhotoPart`.)
public struct OTPSubmission: Codable, Sendable, Equatable {
    public var type: PODType
    public var value: String
    /// Unix seconds when the driver entered the code, and where that stamp came from.
    public var timestamp: Double?
    public var timeSource: TimeSource?
    public init(value: String, timestamp: Double? = nil, timeSource: TimeSource? = nil) {
        self.type = .otp
        self.value = value
        self.timestamp = timestamp
        self.timeSource = timeSource
    }
}

/// The multipart/form-data part names of a photo proof.
public enum PhotoPart {
    /// The image (image/jpeg or image/png).
    public static let photo = "photo"
    /// Where and when it was taken: decimal degrees and unix seconds, as text.
    public static let lat = "lat"
    public static let lng = "lng"
    public static let timestamp = "timestamp"
    /// Optional: where the timestamp came from (`ntp`, `gps` or `unsynced`).
    public static let timeSource = "timeSource"
    /// Optional: the client's SHA-256 of the image, lowercase hex; the backend refuses a mismatch.
    public static let sha256 = "sha256"
    /// The largest photo the backend stores.
    public static let maxBytes = 8 * 1024 * 1024
}

/// The backend's receipt for an accepted proof of delivery.
public struct PODReceipt: Codable, Sendable, Equatable {
    public var taskId: String
    public var type: PODType
    public var accepted: Bool
    /// For photos: the SHA-256 of the stored image (lowercase hex) and its size.
    public var sha256: String?
    public var bytes: Int?

    public init(taskId: String, type: PODType, accepted: Bool, sha256: String? = nil, bytes: Int? = nil) {
        self.taskId = taskId
        self.type = type
        self.accepted = accepted
        self.sha256 = sha256
        self.bytes = bytes
    }
}
