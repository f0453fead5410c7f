/// The `auth.*` namespace: the driver's login on this unit (the unit's own identity is the backend section's).

/// Params of `auth.login`.
public struct LoginParams: Codable, Sendable, Equatable {
    public var username: String
    public var password: String
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }
}

/// Result of `auth.login`.
public struct LoginResult: Codable, Sendable, Equatable {
    public var driverId: String
    /// Unix seconds when the access token expires (the daemon refreshes it before).
    public var expiresAt: Double
    public init(driverId: String, expiresAt: Double) {
        self.driverId = driverId
        self.expiresAt = expiresAt
    }
}

/// Result of `auth.logout`.
public struct LogoutResult: Codable, Sendable, Equatable {
    /// Transitions and proofs kept to send after the same driver's next login.
    public var keptItems: Int
    /// Personal data removed: tasks (with names, phones, addresses), uploaded photos, pushes.
    public var removedTasks: Int
    public var removedPhotos: Int
    public init(keptItems: Int, removedTasks: Int, removedPhotos: Int) {
        self.keptItems = keptItems
        self.removedTasks = removedTasks
        self.removedPhotos = removedPhotos
    }
}

// MARK: Methods

extension Methods {
    /// driverctl: `driverctl login [--username NAME]` (the password from standard input).
    ///
    /// **Mutating.** Params: `{"username": "rider1", "password": "..."}`. Logs in to the backend; the tokens are kept
    /// in the state directory (`tokens.json`, mode 0600) and refreshed before they expire. Result: `{"driverId":
    /// "drv-1", "expiresAt": 1795856400}`. Another driver logging in over the one logged in logs that one out first, as
    /// `auth.logout` does: their tasks, messages and photos go, their queued transitions and proofs stay for their next
    /// login, and the backend's WebSocket opens again with the new driver's token. Each driver's pushes are numbered on
    /// their own by the backend, so the unit keeps where each driver's pushes reached. `permissionDenied` (1001) when
    /// the backend refuses the credentials, `unavailable` (1002) when it cannot be reached or none is configured.
    public static let authLogin = Method<LoginParams, LoginResult>("auth.login", mutating: true)

    /// Clears personal data and the tokens; keeps what is queued for the same driver's next login.
    ///
    /// driverctl: `driverctl logout`.
    ///
    /// **Mutating.** Params: none. Clears personal data (the tasks with names, phones and addresses, the stop order,
    /// unacknowledged pushes, photos already uploaded, the backend's answers kept with refused items; deleted rows are
    /// overwritten and the write-ahead log emptied) and the tokens. Transitions and proofs still queued stay, and go
    /// out after the same driver's next `auth.login`. Result: `{"keptItems": 2, "removedTasks": 2, "removedPhotos":
    /// 1}`.
    public static let authLogout = Method<NoParams, LogoutResult>("auth.logout", mutating: true)

    /// This file's methods, in `Methods.all`.
    static let auth: [MethodDescriptor] = [authLogin.descriptor, authLogout.descriptor]
}
