/// `POST /api/v1/rider/tasks/{taskId}/pod` as JSON: the customer's code. (A photo is sent as
/// multipart/form-data with the parts named in `PhotoPart`.)
public struct OTPSubmission: Codable, Sendable, Equatable {
    public var type: PODType
    public var value: String
    public init(value: String) {
        self.type = .otp
        self.value = value
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
