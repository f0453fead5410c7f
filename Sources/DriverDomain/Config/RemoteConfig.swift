import DriverAPI

/// A configuration document a fleet pushes to its units: a version and the keys it sets. It arrives signed
/// (the signature is checked before this is decoded, by the daemon); these rules decide whether a unit may run it.
public struct RemoteConfigDocument: Sendable, Equatable, Codable {
    public var version: Int
    /// Unix seconds, as the fleet stamped it (informative).
    public var issuedAt: Double?
    public var settings: [String: ConfigValue]

    public init(version: Int, issuedAt: Double? = nil, settings: [String: ConfigValue]) {
        self.version = version
        self.issuedAt = issuedAt
        self.settings = settings
    }
}

/// Why a unit will not run a document: sent back to the fleet in the acknowledgement.
public struct RemoteConfigRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// Where a key's effective value came from (`driverctl config show`).
public enum ConfigSource: Sendable, Equatable, CustomStringConvertible {
    case defaultValue, file, remote(version: Int), flag

    public var description: String {
        switch self {
        case .defaultValue: "default"
        case .file: "file"
        case .remote(let version): "remote v\(version)"
        case .flag: "flag"
        }
    }
}

/// What driverd's command line sets, checked there; it overrides every other layer.
public struct ConfigOverrides: Sendable, Equatable {
    public var socketPath: String?
    public var stateDirectory: String?
    public var gpsd: String?
    public var backendURL: String?
    public var logLevel: LogLevel?
    public var logTarget: LogTarget?

    public init() {}

    public func apply(to config: inout DaemonConfig) {
        if let socketPath { config.socketPath = socketPath }
        if let stateDirectory { config.stateDirectory = stateDirectory }
        if let gpsd { config.gpsd = gpsd }
        if let backendURL { config.backendURL = backendURL }
        if let logLevel { config.logLevel = logLevel }
        if let logTarget { config.logTarget = logTarget }
    }

    /// The configuration keys the command line set.
    public var keys: Set<String> {
        let set: [(String, Bool)] = [
            ("rpc.socket", socketPath != nil), ("daemon.state_dir", stateDirectory != nil), ("gps.gpsd", gpsd != nil),
            ("backend.url", backendURL != nil), ("daemon.log_level", logLevel != nil), ("daemon.log_target", logTarget != nil),
        ]
        return Set(set.filter(\.1).map(\.0))
    }
}

/// The layers of the daemon's configuration, lowest first: the defaults, the file, the fleet's remote document
/// (only `DaemonConfig.remoteKeys`), the command line. Parsed in one pass, so the remote layer is applied
/// atomically on top of the file, and each key knows its source.
public struct ConfigLayers: Sendable, Equatable {
    public var file: [String: ConfigValue]
    public var remote: RemoteConfigDocument?
    public var overrides: ConfigOverrides

    public init(file: [String: ConfigValue], remote: RemoteConfigDocument? = nil, overrides: ConfigOverrides = ConfigOverrides()) {
        self.file = file
        self.remote = remote
        self.overrides = overrides
    }

    public func parse() -> DaemonConfig.Parsed {
        var parsed = DaemonConfig.parse(file.merging(remote?.settings ?? [:]) { $1 })
        overrides.apply(to: &parsed.config)
        return parsed
    }

    public func source(of key: String) -> ConfigSource {
        if overrides.keys.contains(key) { return .flag }
        if let remote, remote.settings[key] != nil { return .remote(version: remote.version) }
        return file[key] != nil ? .file : .defaultValue
    }
}

public enum RemoteConfigRules {
    /// Whether a unit running `running` (nil: none yet) and last offered `newest` may take `document` on top of
    /// `layers`: it must be newer, set only remote keys, and every value must be valid. Returns the configuration
    /// it gives.
    public static func check(_ document: RemoteConfigDocument, running: Int?, newest: Int?, layers: ConfigLayers) -> Result<DaemonConfig, RemoteConfigRefusal> {
        let floor = max(running ?? 0, newest ?? 0)
        guard document.version > floor else {
            return .failure(RemoteConfigRefusal("version \(document.version) is not newer than v\(floor), which this unit already has"))
        }
        let forbidden = document.settings.keys.filter { !DaemonConfig.remoteKeys.contains($0) }.sorted()
        guard forbidden.isEmpty else {
            let unknown = forbidden.filter { !DaemonConfig.knownKeys.contains($0) }
            let detail = unknown.isEmpty ? "" : " (\(unknown.joined(separator: ", ")) unknown)"
            return .failure(RemoteConfigRefusal("not changeable remotely: \(forbidden.joined(separator: ", "))\(detail)"))
        }
        var candidate = layers
        candidate.remote = document
        let parsed = candidate.parse()
        let own = parsed.errors.filter { document.settings[$0.key] != nil }
        guard own.isEmpty else { return .failure(RemoteConfigRefusal(own.map(\.description).joined(separator: "; "))) }
        guard parsed.errors.isEmpty else {
            return .failure(RemoteConfigRefusal("the unit's own configuration has errors: \(parsed.errors.map(\.description).joined(separator: "; "))"))
        }
        return .success(parsed.config)
    }
}

/// The rule that takes a unit back to its last good configuration: a document on trial that has seen
/// `maxStarts` starts within `window` seconds without a healthy minute is given up. Times are seconds since boot
/// (CLOCK_BOOTTIME) within one boot: a wrong wall clock cannot fake or hide a restart loop.
public enum RemoteConfigTrial {
    public static let window = 300.0
    public static let maxStarts = 3
    /// Running this long after readiness makes a document good.
    public static let healthySeconds = 60.0

    public enum Decision: Sendable, Equatable {
        /// Run the document on trial (this start is counted).
        case run(version: Int)
        /// Give it up: run the last good one (nil: the file alone) and say so.
        case rollBack(failed: Int, to: Int?)
    }

    /// At start, with a document on trial and the starts it has already had in this boot.
    public static func decide(trial: Int, good: Int?, earlierStarts: [Double], now: Double) -> Decision {
        let recent = earlierStarts.filter { now - $0 < window && now >= $0 }
        return recent.count + 1 >= maxStarts ? .rollBack(failed: trial, to: good) : .run(version: trial)
    }
}

extension ConfigValue: Codable {
    /// JSON: strings, numbers (integers stay integers) and booleans; anything else is refused by the key's rule.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Each try? is the expected "not this type": the next is tried (anything else is kept as .other, refused by the rules).
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else {
            self = .other("a JSON array, object or null")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .other(let value): try container.encode(value)
        }
    }
}
