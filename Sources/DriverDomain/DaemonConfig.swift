import DriverAPI

/// Where the daemon's log entries go.
public enum LogTarget: String, Sendable, CaseIterable {
    /// journald when stderr is connected to the journal (`JOURNAL_STREAM`), else stderr.
    case auto
    case journal
    case stderr
}

/// How the daemon watches gpsd.
public enum GPSWatchMode: String, Sendable, CaseIterable {
    case adaptive, continuous
}

/// Whether `text` is `HOST:PORT` (or `[V6]:PORT`) with a port from 1 to 65535.
public func isHostPort(_ text: String) -> Bool {
    guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
          (1...65535).contains(port)
    else { return false }
    return colon > text.startIndex
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
    /// gpsd's address, `HOST:PORT`.
    public var gpsd = "127.0.0.1:2947"
    /// adaptive: quiet between samples at slow rates; continuous: stream every fix (replays faster than
    /// real time need it, since they compress wall time).
    public var gpsWatch = GPSWatchMode.adaptive
    /// Record sampled fixes as pings (a later release ties this to shifts).
    public var trackingEnabled = true
    /// A file whose content is 0 or 1 (a GPIO or vehicle-bus bridge); empty: no ignition input.
    public var ignitionPath = ""
    public var powerSupplyDirectory = "/sys/class/power_supply"
    public var saverThresholdPercent = 20
    public var powerPollSeconds = 60
    public var rates = SamplingRates()
    /// The backend's base URL (`https://…`; `http://` only for loopback); empty: nothing is sent.
    public var backendURL = ""
    /// A PEM file of CA certificates to trust instead of the system's; empty: the system roots.
    public var backendCAFile = ""
    /// For unattended units and tests: log in with these when no token is stored or the backend refuses it.
    public var backendUsername = ""
    public var backendPassword = ""
    /// Pings older than this are dropped while the backend is away (hours; default 7 days).
    public var maxPingAgeHours = 168
    /// Past this many queued pings the oldest are thinned to one per minute, then dropped.
    public var maxPings = 1_000_000
    /// Above this speed (m/s; 4.47 = 10 mph) attention-needing actions wait and interruptive pushes are held.
    public var safetySpeedLimit = 4.47
    /// A fix older than this (seconds) leaves the speed unknown, which counts as moving unless the ignition is off.
    public var safetyStaleFixSeconds = 10.0
    /// Start a shift when the daemon starts (units without a driver, tests); otherwise `shift.start`.
    public var shiftAutoStart = false
    /// A login older than this (hours) must be renewed: the uplink pauses and `auth.required` is raised.
    public var maxLoginAgeHours = 24.0

    public init() {}

    /// Whether `text` is a backend URL the daemon accepts: https, or http to a loopback address only
    /// (TLS is never switched off for a real network).
    public static func isBackendURL(_ text: String) -> Bool {
        if text.hasPrefix("https://") { return text.count > "https://".count }
        guard text.hasPrefix("http://") else { return false }
        let rest = text.dropFirst("http://".count)
        return ["127.0.0.1", "[::1]", "localhost"].contains { rest == $0 || rest.hasPrefix($0 + ":") || rest.hasPrefix($0 + "/") }
    }

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
        "gps.gpsd": { config, value in
            guard case .string(let text) = value, isHostPort(text) else { return "expected HOST:PORT, e.g. 127.0.0.1:2947" }
            config.gpsd = text
            return nil
        },
        "gps.watch": { config, value in
            guard case .string(let text) = value, let mode = GPSWatchMode(rawValue: text) else {
                return "expected adaptive or continuous"
            }
            config.gpsWatch = mode
            return nil
        },
        "tracking.enabled": { config, value in
            guard case .bool(let flag) = value else { return "expected true or false" }
            config.trackingEnabled = flag
            return nil
        },
        "ignition.path": { config, value in
            guard case .string(let path) = value, path.isEmpty || path.hasPrefix("/") else {
                return "expected an absolute path, or \"\" for none"
            }
            config.ignitionPath = path
            return nil
        },
        "battery.power_supply_dir": { config, value in
            absolutePath(value).map { config.powerSupplyDirectory = $0; return nil } ?? "expected an absolute path"
        },
        "battery.saver_threshold_percent": { config, value in
            guard case .integer(let percent) = value, (0...100).contains(percent) else { return "expected an integer from 0 to 100" }
            config.saverThresholdPercent = percent
            return nil
        },
        "battery.poll_seconds": { config, value in
            guard case .integer(let seconds) = value, (1...3600).contains(seconds) else { return "expected an integer from 1 to 3600" }
            config.powerPollSeconds = seconds
            return nil
        },
        "sampling.moving_hz": rate { $0.rates.moving = $1 },
        "sampling.stationary_hz": rate { $0.rates.stationary = $1 },
        "sampling.saver_moving_hz": rate { $0.rates.saverMoving = $1 },
        "sampling.saver_stationary_hz": rate { $0.rates.saverStationary = $1 },
        "backend.url": { config, value in
            guard case .string(let text) = value, text.isEmpty || isBackendURL(text) else {
                return "expected an https:// URL (http:// only to 127.0.0.1, [::1] or localhost), or \"\" for none"
            }
            config.backendURL = text
            return nil
        },
        "backend.ca_file": { config, value in
            guard case .string(let path) = value, path.isEmpty || path.hasPrefix("/") else {
                return "expected an absolute path, or \"\" for the system's roots"
            }
            config.backendCAFile = path
            return nil
        },
        "backend.username": { config, value in
            guard case .string(let text) = value else { return "expected a string" }
            config.backendUsername = text
            return nil
        },
        "backend.password": { config, value in
            guard case .string(let text) = value else { return "expected a string" }
            config.backendPassword = text
            return nil
        },
        "outbox.max_ping_age_hours": { config, value in
            guard case .integer(let hours) = value, (1...8760).contains(hours) else { return "expected an integer from 1 to 8760" }
            config.maxPingAgeHours = hours
            return nil
        },
        "outbox.max_pings": { config, value in
            guard case .integer(let count) = value, (1000...100_000_000).contains(count) else {
                return "expected an integer from 1000 to 100000000"
            }
            config.maxPings = count
            return nil
        },
        "safety.speed_limit": number(0.5...50, "a speed in m/s from 0.5 to 50") { $0.safetySpeedLimit = $1 },
        "safety.stale_fix_seconds": number(1...300, "seconds from 1 to 300") { $0.safetyStaleFixSeconds = $1 },
        "shift.auto_start": { config, value in
            guard case .bool(let flag) = value else { return "expected true or false" }
            config.shiftAutoStart = flag
            return nil
        },
        "auth.max_login_age_hours": number(0.0005...720, "hours from 0.0005 to 720") { $0.maxLoginAgeHours = $1 },
        "rpc.max_line_bytes": { config, value in
            guard case .integer(let bytes) = value, (1024...(16 << 20)).contains(bytes) else {
                return "expected an integer from 1024 to 16777216"
            }
            config.maxLineBytes = bytes
            return nil
        },
    ]

    private static func number(
        _ range: ClosedRange<Double>, _ expected: String, _ set: @escaping @Sendable (inout DaemonConfig, Double) -> Void
    ) -> Apply {
        { config, value in
            let number: Double
            switch value {
            case .double(let value): number = value
            case .integer(let value): number = Double(value)
            default: return "expected \(expected)"
            }
            guard range.contains(number) else { return "expected \(expected)" }
            set(&config, number)
            return nil
        }
    }

    private static func rate(_ set: @escaping @Sendable (inout DaemonConfig, Double) -> Void) -> Apply {
        { config, value in
            let hz: Double
            switch value {
            case .double(let number): hz = number
            case .integer(let number): hz = Double(number)
            default: return "expected a rate in hertz from 0.001 to 10"
            }
            guard (0.001...10).contains(hz) else { return "expected a rate in hertz from 0.001 to 10" }
            set(&config, hz)
            return nil
        }
    }

    private static func absolutePath(_ value: ConfigValue) -> String? {
        guard case .string(let path) = value, path.hasPrefix("/") else { return nil }
        return path
    }
}
