/// `POST /api/v1/auth/login`.
public struct LoginRequest: Codable, Sendable, Equatable {
    public var username: String
    public var password: String
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }
}

/// `POST /api/v1/auth/refresh`.
public struct RefreshRequest: Codable, Sendable, Equatable {
    public var refreshToken: String
    public init(refreshToken: String) { self.refreshToken = refreshToken }
}

/// The answer to login and refresh: a Bearer access token (a JWT) that expires after `expiresIn` seconds, and a
/// longer-lived refresh token, and the driver's language when their profile has one.
public struct TokenResponse: Codable, Sendable, Equatable {
    public var accessToken: String
    public var refreshToken: String
    public var tokenType: String
    public var expiresIn: Int
    public var driverId: String
    /// The language the driver's profile names (a BCP 47 tag: `pt`, `pt-BR`), for the screen and the voice; absent
    /// when the profile has none.
    public var language: String?
    public init(
        accessToken: String, refreshToken: String, tokenType: String = "Bearer", expiresIn: Int, driverId: String, language: String? = nil
    ) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.driverId = driverId
        self.language = language
    }
}
