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
    ///
    /// driverctl: `driverctl config show`.
    ///
    /// Since API 1.8. Params: none. The effective configuration (`driverctl config show`): `entries`, every key sorted,
    /// each `{"key", "value", "source"}` with the value in TOML notation (secrets as `"<redacted>"`) and its source:
    /// `default`, `file`, `remote vN` (the fleet's document N) or `flag` (driverd's command line); and `remote`:
    /// `{"enabled": true, "running": 2, "onTrial": false}` (`enabled`: `remote.public_key` is set; `running`: the
    /// document version in effect, absent for none; `onTrial`: it has not yet run `remote.healthy_seconds`, so restarts
    /// may still roll it back).
    ///
    /// How remote configuration works: the backend pushes `CONFIG_UPDATE`, or the link comes back; the daemon fetches
    /// `GET /api/v1/rider/config` (`{"document": {"payload": base64 JSON, "signature": base64 Ed25519}}`), checks the
    /// signature against `remote.public_key`, that the version is newer than any it has taken, that every key is
    /// changeable remotely (sampling, battery, motion, arrival, safety, retention, trips, harsh driving, uplink
    /// cadence, log level) and every value valid; stores it durably on trial and stops (exit status 75) so that systemd
    /// starts it again with the document applied on top of the file, all keys at once. After `remote.healthy_seconds`
    /// (60) it is good and the backend hears `APPLIED`; a document refused is answered `REFUSED` with the reason; one
    /// that saw 3 starts within 5 minutes without a healthy run is given up for the last good one and answered
    /// `ROLLED_BACK` (`POST /api/v1/rider/config/acks`, through the outbox).
    public static let configShow = Method<NoParams, ConfigShowResult>("config.show", mutating: false)

    /// This file's methods, in `Methods.all`.
    static let config: [MethodDescriptor] = [configShow.descriptor]
}
