import DriverAPI

/// Where the daemon's log entries go.
public enum LogTarget: String, Sendable, CaseIterable {
    /// journald when stderr is connected to the journal (`JOURNAL_STREAM`), else stderr.
    case auto
    case journal
    case stderr
}

/// The daemon's settings, with the documented defaults. Built from the config file's flattened keys
/// (`section.key`), then command-line flags override single fields.
public struct DaemonConfig: Sendable, Equatable {
    public var socketPath = "/run/driverd/driverd.sock"
    public var stateDirectory = "/var/lib/driverd"
    /// Members of this group (and root) may call mutating methods.
    public var rpcGroup = "driver"
    public var maxLineBytes = 1 << 20
    public var logLevel = LogLevel.info
    public var logTarget = LogTarget.auto

    public init() {}

    /// The outcome of reading a configuration: the settings, and what was wrong or unknown.
    public struct Parsed: Sendable {
        public var config: DaemonConfig
        /// Invalid values; the daemon refuses to start with any.
        public var errors: [ConfigIssue]
        /// Unknown keys; reported, not fatal, so an older daemon still starts with a newer file.
        public var warnings: [ConfigIssue]
    }

    public static func parse(_ values: [String: ConfigValue]) -> Parsed {
        var parsed = Parsed(config: DaemonConfig(), errors: [], warnings: [])
        for key in values.keys.sorted() {
            let value = values[key]!
            guard let apply = keys[key] else {
                parsed.warnings.append(ConfigIssue(key: key, message: "unknown key, ignored"))
                continue
            }
            if let problem = apply(&parsed.config, value) {
                parsed.errors.append(ConfigIssue(key: key, message: "\(value) is invalid: \(problem)"))
            }
        }
        return parsed
    }

    /// Every key, documented in packaging/driverd.toml.
    public static var knownKeys: [String] { keys.keys.sorted() }

    private typealias Apply = @Sendable (inout DaemonConfig, ConfigValue) -> String?

    private static let keys: [String: Apply] = [
        "daemon.state_dir": { config, value in
            absolutePath(value).map { config.stateDirectory = $0; return nil } ?? "expected an absolute path"
        },
        "daemon.log_level": { config, value in
            guard case .string(let text) = value, let level = LogLevel(rawValue: text) else {
                return "expected one of \(LogLevel.allCases.map(\.rawValue).joined(separator: ", "))"
            }
            config.logLevel = level
            return nil
        },
        "daemon.log_target": { config, value in
            guard case .string(let text) = value, let target = LogTarget(rawValue: text) else {
                return "expected one of \(LogTarget.allCases.map(\.rawValue).joined(separator: ", "))"
            }
            config.logTarget = target
            return nil
        },
        "rpc.socket": { config, value in
            guard let path = absolutePath(value) else { return "expected an absolute path" }
            // The daemon binds `PATH.new` first, then renames it into place.
            guard path.utf8.count < 104 else { return "a Unix socket path must be shorter than 104 bytes" }
            config.socketPath = path
            return nil
        },
        "rpc.group": { config, value in
            guard case .string(let name) = value, !name.isEmpty, !name.contains(":") else {
                return "expected a group name"
            }
            config.rpcGroup = name
            return nil
        },
        "rpc.max_line_bytes": { config, value in
            guard case .integer(let bytes) = value, (1024...(16 << 20)).contains(bytes) else {
                return "expected an integer from 1024 to 16777216"
            }
            config.maxLineBytes = bytes
            return nil
        },
    ]

    private static func absolutePath(_ value: ConfigValue) -> String? {
        guard case .string(let path) = value, path.hasPrefix("/") else { return nil }
        return path
    }
}
