/// Params of `pod.photo`: a JPEG or PNG file the daemon can read; it is copied into the daemon's spool.
public struct PhotoParams: Codable, Sendable, Equatable {
    public var taskId: String?
    public var path: String
    public init(taskId: String? = nil, path: String) {
        self.taskId = taskId
        self.path = path
    }
}

/// Params of `pod.otp`: the customer's 4-digit code.
public struct OTPParams: Codable, Sendable, Equatable {
    public var taskId: String?
    public var otp: String
    public init(taskId: String? = nil, otp: String) {
        self.taskId = taskId
        self.otp = otp
    }
}

/// Result of `pod.photo` and `pod.otp`.
public struct PODResult: Codable, Sendable, Equatable {
    public var task: TaskView
    /// For a photo: the spooled copy's SHA-256 (lowercase hex) and size.
    public var sha256: String?
    public var bytes: Int?
    public init(task: TaskView, sha256: String? = nil, bytes: Int? = nil) {
        self.task = task
        self.sha256 = sha256
        self.bytes = bytes
    }
}

/// Params of the `pod.progress` event: a photo upload going on.
public struct PODProgressEvent: Codable, Sendable, Equatable {
    public var taskId: String
    public var sentBytes: Int
    public var totalBytes: Int
    public init(taskId: String, sentBytes: Int, totalBytes: Int) {
        self.taskId = taskId
        self.sentBytes = sentBytes
        self.totalBytes = totalBytes
    }
}

/// Params of the `pod.verdict` event: the backend's answer to a queued proof of delivery.
public struct PODVerdictEvent: Codable, Sendable, Equatable {
    public var taskId: String
    public var type: String
    public var accepted: Bool
    public var message: String?
    public init(taskId: String, type: String, accepted: Bool, message: String?) {
        self.taskId = taskId
        self.type = type
        self.accepted = accepted
        self.message = message
    }
}

// MARK: Methods

extension Methods {
    /// driverctl: `driverctl pod photo FILE`.
    ///
    /// **Mutating.** Params: `{"taskId": "task-1002", "path": "/home/driver/handover.jpg"}`: an absolute path the
    /// daemon may read. It must be a JPEG or PNG of at most 8 MiB (else `invalid params` saying why). The daemon copies
    /// it into its spool (`<state>/spool`, written to a temporary name, synced, renamed), hashes it, stamps the
    /// position and time, and queues the upload; `pod.progress` events follow it. Result:
    /// `{"task": {...}, "sha256": "…", "bytes": 614404}`.
    public static let podPhoto = Method<PhotoParams, PODResult>("pod.photo", mutating: true)

    /// driverctl: `driverctl pod otp CODE`.
    ///
    /// **Mutating.** Params: `{"taskId": "task-1001", "otp": "4812"}` (4 digits). Once the goods are picked up. Online,
    /// the backend checks it at once: a wrong code is `proof rejected` (1005) with `data.attemptsLeft`; enter it
    /// again. When the backend cannot be reached, the code is queued as `unverified` and delivery may go on; the
    /// backend's verdict arrives later as `pod.verdict`. Result: `{"task": {...}}`.
    public static let podOTP = Method<OTPParams, PODResult>("pod.otp", mutating: true, screen: true)

    /// This file's methods, in `Methods.all`.
    static let pod: [MethodDescriptor] = [podPhoto.descriptor, podOTP.descriptor]
}
