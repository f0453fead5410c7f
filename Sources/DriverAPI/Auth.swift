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
    public static let authLogin = Method<LoginParams, LoginResult>("auth.login", mutating: true)
    /// Clears personal data and the tokens; keeps what is queued for the same driver's next login.
    public static let authLogout = Method<NoParams, LogoutResult>("auth.logout", mutating: true)

    /// This file's methods, in `Methods.all`.
    static let auth: [MethodDescriptor] = [authLogin.descriptor, authLogout.descriptor]
}
