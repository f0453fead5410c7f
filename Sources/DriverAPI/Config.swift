/// One key of `config.show`.
public struct ConfigEntry: Codable, Sendable, Equatable {
    public var key: String
    /// In TOML notation; secrets as `"<redacted>"`.
    public var value: String
    /// `default`, `file`, `remote vN` or `flag`.
    public var source: String

    public init(key: String, value: String, source: String) {
        self.key = key
        self.value = value
        self.source = source
    }
}

/// Where remote configuration stands on this unit.
public struct RemoteConfigStatus: Codable, Sendable, Equatable {
    /// A fleet key is configured (`remote.public_key`): signed documents are taken.
    public var enabled: Bool
    /// The document version running; nil: none (the file alone).
    public var running: Int?
    /// The running document has not yet run a healthy while (`remote.healthy_seconds`): restarts may roll it back.
    public var onTrial: Bool

    public init(enabled: Bool, running: Int?, onTrial: Bool) {
        self.enabled = enabled
        self.running = running
        self.onTrial = onTrial
    }
}

/// Result of `config.show` (API 1.8).
public struct ConfigShowResult: Codable, Sendable, Equatable {
    /// Every key, sorted.
    public var entries: [ConfigEntry]
    public var remote: RemoteConfigStatus

    public init(entries: [ConfigEntry], remote: RemoteConfigStatus) {
        self.entries = entries
        self.remote = remote
    }
}

// MARK: Methods

extension Methods {
    /// The effective configuration: every key's value and its source (default, file, remote vN, flag).
    public static let configShow = Method<NoParams, ConfigShowResult>("config.show", mutating: false)

    /// This file's methods, in `Methods.all`.
    static let config: [MethodDescriptor] = [configShow.descriptor]
}
