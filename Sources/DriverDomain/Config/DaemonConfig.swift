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

/// `ignition.source`: `auto` takes the vehicle's adapter when one is configured, else the ignition file when a path
/// is set, else GPS motion alone.
public enum IgnitionSourceSetting: String, Sendable, CaseIterable {
    case auto, obd, file, gps
}

/// Whether `text` is the base64 of 32 bytes (an Ed25519 public key): 43 characters of the alphabet and one '='.
public func isBase64Key(_ text: String) -> Bool {
    let bytes = Array(text.utf8)
    guard bytes.count == 44, bytes[43] == UInt8(ascii: "=") else { return false }
    // A-Z, a-z, 0-9, '+', '/'.
    return bytes[..<43].allSatisfy { (65...90).contains($0) || (97...122).contains($0) || (48...57).contains($0) || $0 == 43 || $0 == 47 }
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
    /// The fix-quality filter's limits (`gps.max_horizontal_error`).
    public var fixLimits = FixQualityLimits()
    /// The motion detector's thresholds (`motion.stationary_seconds`).
    public var motion = MotionThresholds()
    /// The backend's base URL (`https://…`; `http://` only for loopback); empty: nothing is sent.
    public var backendURL = ""
    /// A PEM file of CA certificates to trust instead of the system's; empty: the system roots.
    public var backendCAFile = ""
    /// For unattended units and tests: log in with these when no token is stored or the backend refuses it.
    public var backendUsername = ""
    public var backendPassword = ""
    /// The fleet's claim token for enrolment ("" = none).
    public var backendClaimToken = ""
    /// Where the unit's key is made at its first start: `auto` (the TPM at `/dev/tpmrm0` when there is one, else a
    /// file), `none` (a file), or a tpm2-tss TCTI (`device:/dev/tpmrm0`, `swtpm:host=127.0.0.1,port=2321`).
    public var backendTPM = DaemonConfig.tpmAuto
    public static let tpmAuto = "auto"
    public static let tpmNone = "none"
    /// The kernel's TPM 2.0 resource manager, which `auto` looks for.
    public static let tpmDevice = "/dev/tpmrm0"
    /// Pings older than this are dropped while the backend is away (hours; default 7 days).
    public var maxPingAgeHours = 168
    /// Past this many queued pings the oldest are thinned to one per minute, then dropped.
    public var maxPings = 1_000_000
    /// MB of the state directory's file system kept back for the driver's changes (a file, `reserve`, given up when
    /// another program filled the disk); 0: none.
    public var storageReserveMB = 4
    /// On shift, a health report to the backend at least this often (minutes); sooner when something in it changed.
    public var healthReportMinutes = 30
    /// node_exporter's textfile collector's file for the unit's metrics ("": none).
    public var metricsTextfile = ""
    /// Ping batches while moving and while stationary, seconds; an unacked SOS is tried at least this often.
    public var uplinkMovingSeconds = 5.0
    public var uplinkStationarySeconds = 10.0
    /// Parked with the ignition off or a low battery: one burst of pings and heartbeats this often (a radio pays per waking).
    public var uplinkSaverSeconds = 120.0
    /// The unit's keepalive on an idle WebSocket, seconds: sent only when nothing else went or came for this long. It must
    /// stay under the carrier NAT's idle timeout (RFC 5382 asks for at least 2 h 4 min; carriers' vary: measure).
    public var uplinkKeepaliveSeconds = 600.0
    public var urgentRetrySeconds = 5.0
    /// The longest wait between attempts while the backend is away (seconds).
    public var retryCapSeconds = 120.0
    /// The fleet's number of units and the new connections a second its backend takes: their ratio is the window
    /// over which a unit spreads its first attempt after a start and its return after a `Retry-After`.
    public var fleetSize = 1
    public var backendConnectRate = 100.0

    /// `fleetSize` over `backendConnectRate`, seconds.
    public var spreadWindowSeconds: Double { Double(fleetSize) / backendConnectRate }
    /// Above this speed (m/s; 4.47 = 10 mph) attention-needing actions wait and interruptive pushes are held.
    public var safetySpeedLimit = 4.47
    /// A fix older than this (seconds) leaves the speed unknown, which counts as moving unless the ignition is off.
    public var safetyStaleFixSeconds = 10.0
    /// Start a shift when the daemon starts (units without a driver, tests); otherwise `shift.start`.
    public var shiftAutoStart = false
    /// A login older than this (hours) must be renewed: the uplink pauses and `auth.required` is raised.
    public var maxLoginAgeHours = 24.0
    /// What a geofence arrival does: `auto` performs `task.arrive`, `suggest` asks the driver, `off` nothing.
    public var arrivalMode = ArrivalMode.suggest
    /// A stop's geofence when the backend names none, metres.
    public var arrivalRadius = 100.0
    /// Seconds slow inside a geofence before it counts as an arrival.
    public var arrivalDwellSeconds = 20.0
    /// Standing with the ignition on for longer than this (seconds) is idling.
    public var idleSeconds = 300.0
    /// Harsh braking and acceleration thresholds, m/s² (0: not reported).
    public var harshBraking = 3.5
    public var harshAcceleration = 3.0
    /// The fleet's Ed25519 public key (base64 of its 32 bytes) that signs remote configuration; empty: none is taken.
    public var remotePublicKey = ""
    /// A remote document on trial becomes good after running this long (seconds).
    public var remoteHealthySeconds = 60.0
    /// Whether the unit installs the fleet's releases itself (`auto`), or its image is updated by Mender, RAUC or
    /// SWUpdate and it only reports its version (`external`).
    public var updateMode = UpdateMode.auto
    /// The fleet's release key (Ed25519, base64 of 32 bytes), apart from the configuration key; empty: no release
    /// is taken.
    public var updatePublicKey = ""
    /// A release's download never takes more than this many bytes a day of the cellular link.
    public var updateMaxBytesPerDay = 50 << 20
    /// Parked with the ignition off this long (minutes) is a maintenance window, on shift too.
    public var updateQuietMinutes = 30.0
    /// Daily local hours when a release may be installed (`"2-5"`; `""`: none).
    public var updateWindow = ""
    /// A new version must run this long (seconds) without a restart before it is committed.
    public var updateHealthySeconds = 120.0
    /// dpkg's status file: which packages are installed, at which version.
    public var updateDpkgStatus = "/var/lib/dpkg/status"
    /// A requested diagnostic bundle goes up in chunks of this many bytes, and is never larger than the cap.
    public var diagChunkBytes = 65536
    public var diagMaxBundleBytes = 4 << 20
    /// The OBD-II adapter: a serial device (`/dev/ttyUSB0`, `/dev/rfcomm0`) or a Wi-Fi adapter's `HOST:PORT`; empty: none.
    public var vehicleAdapter = ""
    public var vehicleBaudRate = 38400
    /// Below this supply voltage (V), with the engine off, for `vehicleLowVoltageSeconds`, the unit protects the
    /// vehicle's battery.
    public var vehicleLowVoltage = 11.8
    public var vehicleLowVoltageSeconds = 300.0
    /// Fault codes are read at ignition on and this often while the engine runs (seconds).
    public var vehicleFaultCheckSeconds = 600.0
    /// Parked (and for fuel, odometer, voltage always) the vehicle is read this often (seconds).
    public var vehicleParkedPollSeconds = 60.0
    public var ignitionSource = IgnitionSourceSetting.auto
    /// Ask logind to power the unit off once the vehicle's battery is protected.
    public var shutdownOnLowVoltage = false

    public init() {}

    /// Where the ignition comes from, `auto` resolved.
    public var effectiveIgnitionSource: IgnitionSource {
        switch ignitionSource {
        case .obd: .obd
        case .file: .file
        case .gps: .gps
        case .auto: !vehicleAdapter.isEmpty ? .obd : !ignitionPath.isEmpty ? .file : .gps
        }
    }

    /// Whether `text` names an adapter: empty (none), an absolute device path, or `HOST:PORT`.
    public static func isAdapterAddress(_ text: String) -> Bool { text.isEmpty || text.hasPrefix("/") || isHostPort(text) }

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
            guard let entry = keys[key] else {
                let hint = ConfigKeySuggestion.closest(to: key, among: knownKeys).map { " (did you mean \($0)?)" } ?? ""
                parsed.warnings.append(ConfigIssue(key: key, message: "unknown key, ignored\(hint)"))
                continue
            }
            if let problem = entry.apply(&parsed.config, value) {
                parsed.errors.append(ConfigIssue(key: key, message: "\(value) is invalid: \(problem)"))
            }
        }
        parsed.warnings += parsed.config.consistencyWarnings()
        return parsed
    }

    /// Every key, documented in packaging/driverd.toml.
    public static let knownKeys: [String] = keys.keys.sorted()

    /// Keys whose values are secrets: never logged, shown as `<redacted>` in diagnostics.
    public static let secretKeys: Set<String> = ["backend.password", "backend.claim_token"]

    /// The value of every key as this configuration has it, in TOML notation, secrets redacted.
    public var effectiveValues: [String: String] {
        var values: [String: String] = [:]
        for (key, entry) in Self.keys {
            let value = entry.show(self)
            if Self.secretKeys.contains(key), value != .string("") {
                values[key] = ConfigValue.string(ConfigRedaction.placeholder).description
            } else {
                values[key] = value.description
            }
        }
        return values
    }

    /// The value of one key in this configuration (nil for an unknown key).
    public func value(of key: String) -> ConfigValue? { Self.keys[key]?.show(self) }

    /// Settings that are each valid but together probably not what the operator meant.
    func consistencyWarnings() -> [ConfigIssue] {
        var warnings: [ConfigIssue] = []
        if !backendUsername.isEmpty, backendPassword.isEmpty {
            warnings.append(ConfigIssue(key: "backend.password", message: "empty while backend.username is set: the login will fail"))
        }
        if backendURL.isEmpty, !backendUsername.isEmpty || !backendCAFile.isEmpty {
            warnings.append(ConfigIssue(key: "backend.url", message: "empty: nothing is sent, so the other backend keys have no effect"))
        }
        if rates.saverMoving > rates.moving {
            warnings.append(ConfigIssue(
                key: "sampling.saver_moving_hz", message: "\(rates.saverMoving) is above sampling.moving_hz (\(rates.moving)): battery-saver mode would sample faster"))
        }
        if rates.saverStationary > rates.stationary {
            warnings.append(ConfigIssue(
                key: "sampling.saver_stationary_hz",
                message: "\(rates.saverStationary) is above sampling.stationary_hz (\(rates.stationary)): battery-saver mode would sample faster"))
        }
        if ignitionSource == .obd, vehicleAdapter.isEmpty {
            warnings.append(ConfigIssue(key: "ignition.source", message: "obd without vehicle.adapter: no ignition input, GPS motion decides"))
        }
        if ignitionSource == .file, ignitionPath.isEmpty {
            warnings.append(ConfigIssue(key: "ignition.source", message: "file without ignition.path: no ignition input, GPS motion decides"))
        }
        return warnings
    }

    /// How one key is read from the file and shown back.
    private struct Key: Sendable {
        /// Sets the value; returns what is allowed when the value is not.
        let apply: @Sendable (inout DaemonConfig, ConfigValue) -> String?
        let show: @Sendable (DaemonConfig) -> ConfigValue
        /// Whether a fleet's signed document may set it (`remoteKeys`).
        var isRemote = false

        /// The same key, settable from afar.
        var fleetMayChange: Key {
            var key = self
            key.isRemote = true
            return key
        }
    }

    /// What a fleet may change from afar, marked on each key below: sampling, battery, motion, arrival, safety,
    /// retention, trips, harsh driving, the uplink's cadence and the log level. Never where the daemon listens or
    /// stores, whom it talks to, or with which credentials: a bad document must not be able to cut a unit off or leak.
    public static let remoteKeys: Set<String> = Set(keys.filter(\.value.isRemote).keys)

    private static let keys: [String: Key] = [
        "daemon.state_dir": path(\.stateDirectory),
        "daemon.log_level": choice(\.logLevel).fleetMayChange,
        "daemon.log_target": choice(\.logTarget),
        "rpc.socket": Key(
            apply: { config, value in
                guard case .string(let path) = value, path.hasPrefix("/") else { return "expected an absolute path" }
                // The daemon binds `PATH.new` first, then renames it into place.
                guard path.utf8.count < 104 else { return "a Unix socket path must be shorter than 104 bytes" }
                config.socketPath = path
                return nil
            },
            show: { .string($0.socketPath) }),
        "rpc.group": string(\.rpcGroup, "a group name") { !$0.isEmpty && !$0.contains(":") },
        "rpc.max_line_bytes": integer(\.maxLineBytes, 1024...(16 << 20)),
        "gps.gpsd": Key(
            apply: { config, value in
                guard case .string(let text) = value, isHostPort(text) else { return "expected HOST:PORT, e.g. 127.0.0.1:2947" }
                config.gpsd = text
                return nil
            },
            show: { .string($0.gpsd) }),
        "gps.watch": choice(\.gpsWatch),
        "gps.max_horizontal_error": number(\.fixLimits.maxHorizontalError, 5...10_000, "metres from 5 to 10000").fleetMayChange,
        "motion.stationary_seconds": number(\.motion.stationaryDuration, 10...600, "seconds from 10 to 600").fleetMayChange,
        "tracking.enabled": flag(\.trackingEnabled),
        "ignition.path": optionalPath(\.ignitionPath, none: "none"),
        "battery.power_supply_dir": path(\.powerSupplyDirectory),
        "battery.saver_threshold_percent": integer(\.saverThresholdPercent, 0...100).fleetMayChange,
        "battery.poll_seconds": integer(\.powerPollSeconds, 1...3600).fleetMayChange,
        "sampling.moving_hz": rate(\.rates.moving).fleetMayChange,
        "sampling.stationary_hz": rate(\.rates.stationary).fleetMayChange,
        "sampling.saver_moving_hz": rate(\.rates.saverMoving).fleetMayChange,
        "sampling.saver_stationary_hz": rate(\.rates.saverStationary).fleetMayChange,
        "backend.url": Key(
            apply: { config, value in
                guard case .string(let text) = value, text.isEmpty || isBackendURL(text) else {
                    return "expected an https:// URL (http:// only to 127.0.0.1, [::1] or localhost), or \"\" for none"
                }
                config.backendURL = text
                return nil
            },
            show: { .string($0.backendURL) }),
        "backend.ca_file": optionalPath(\.backendCAFile, none: "the system's roots"),
        "backend.username": text(\.backendUsername),
        "backend.password": text(\.backendPassword),
        "backend.claim_token": text(\.backendClaimToken),
        "backend.tpm": string(\.backendTPM, "\"auto\", \"none\", or a TCTI such as \"device:/dev/tpmrm0\" or \"swtpm:host=127.0.0.1,port=2321\"") {
            $0 == DaemonConfig.tpmAuto || $0 == DaemonConfig.tpmNone || $0.firstRange(of: ":") != nil
        },
        "outbox.max_ping_age_hours": integer(\.maxPingAgeHours, 1...8760).fleetMayChange,
        "outbox.max_pings": integer(\.maxPings, 1000...100_000_000).fleetMayChange,
        "storage.reserve_mb": integer(\.storageReserveMB, 0...256),
        "health.report_minutes": integer(\.healthReportMinutes, 1...1440).fleetMayChange,
        "metrics.textfile": optionalPath(\.metricsTextfile, none: "none"),
        "uplink.moving_batch_seconds": number(\.uplinkMovingSeconds, 1...300, "seconds from 1 to 300").fleetMayChange,
        "uplink.stationary_batch_seconds": number(\.uplinkStationarySeconds, 1...300, "seconds from 1 to 300").fleetMayChange,
        "uplink.saver_batch_seconds": number(\.uplinkSaverSeconds, 10...600, "seconds from 10 to 600").fleetMayChange,
        "uplink.keepalive_seconds": number(\.uplinkKeepaliveSeconds, 10...7200, "seconds from 10 to 7200").fleetMayChange,
        "uplink.urgent_retry_seconds": number(\.urgentRetrySeconds, 1...60, "seconds from 1 to 60").fleetMayChange,
        "uplink.retry_cap_seconds": number(\.retryCapSeconds, 30...3600, "seconds from 30 to 3600").fleetMayChange,
        "uplink.fleet_size": integer(\.fleetSize, 1...10_000_000).fleetMayChange,
        "uplink.backend_connect_rate": number(\.backendConnectRate, 1...1_000_000, "new connections a second, from 1 to 1000000").fleetMayChange,
        "safety.speed_limit": number(\.safetySpeedLimit, 0.5...50, "a speed in m/s from 0.5 to 50").fleetMayChange,
        "safety.stale_fix_seconds": number(\.safetyStaleFixSeconds, 1...300, "seconds from 1 to 300").fleetMayChange,
        "shift.auto_start": flag(\.shiftAutoStart),
        "auth.max_login_age_hours": number(\.maxLoginAgeHours, 0.0005...720, "hours from 0.0005 to 720"),
        "arrival.mode": choice(\.arrivalMode).fleetMayChange,
        "arrival.radius": number(\.arrivalRadius, 10...5000, "metres from 10 to 5000").fleetMayChange,
        "arrival.dwell_seconds": number(\.arrivalDwellSeconds, 0...600, "seconds from 0 to 600").fleetMayChange,
        "trips.idle_seconds": number(\.idleSeconds, 30...3600, "seconds from 30 to 3600").fleetMayChange,
        "harsh.braking_mps2": number(\.harshBraking, 0...15, "m/s² from 0 (off) to 15").fleetMayChange,
        "harsh.acceleration_mps2": number(\.harshAcceleration, 0...15, "m/s² from 0 (off) to 15").fleetMayChange,
        "remote.public_key": string(\.remotePublicKey, "the fleet's Ed25519 public key: 44 characters of base64, or \"\" for none") {
            $0.isEmpty || isBase64Key($0)
        },
        "remote.healthy_seconds": number(\.remoteHealthySeconds, 5...3600, "seconds from 5 to 3600"),
        "vehicle.adapter": string(\.vehicleAdapter, "a serial device path (/dev/ttyUSB0), HOST:PORT of a Wi-Fi adapter, or \"\" for none") {
            isAdapterAddress($0)
        },
        "vehicle.baud_rate": Key(
            apply: { config, value in
                let rates = [9600, 19200, 38400, 57600, 115200, 230400, 460800, 500000, 921600, 1_000_000, 2_000_000]
                guard case .integer(let rate) = value, rates.contains(rate) else {
                    return "expected one of \(rates.map(String.init).joined(separator: ", "))"
                }
                config.vehicleBaudRate = rate
                return nil
            },
            show: { .integer($0.vehicleBaudRate) }),
        "vehicle.low_voltage": number(\.vehicleLowVoltage, 10...13, "volts from 10 to 13").fleetMayChange,
        "vehicle.low_voltage_seconds": number(\.vehicleLowVoltageSeconds, 5...3600, "seconds from 5 to 3600").fleetMayChange,
        "vehicle.fault_check_seconds": number(\.vehicleFaultCheckSeconds, 5...86400, "seconds from 5 to 86400").fleetMayChange,
        "vehicle.parked_poll_seconds": number(\.vehicleParkedPollSeconds, 5...3600, "seconds from 5 to 3600").fleetMayChange,
        "ignition.source": choice(\.ignitionSource),
        "power.shutdown_on_low_voltage": flag(\.shutdownOnLowVoltage).fleetMayChange,
        "update.mode": choice(\.updateMode),
        "update.public_key": string(\.updatePublicKey, "the fleet's Ed25519 release key: 44 characters of base64, or \"\" for none") {
            $0.isEmpty || isBase64Key($0)
        },
        "update.max_bytes_per_day": integer(\.updateMaxBytesPerDay, (1 << 20)...(4 << 30)).fleetMayChange,
        "update.quiet_minutes": number(\.updateQuietMinutes, 1...1440, "minutes from 1 to 1440").fleetMayChange,
        "update.window": string(\.updateWindow, "local hours START-END, each 0 to 23 (\"2-5\", \"22-4\"), or \"\" for none") {
            MaintenanceWindow.Hours.parse($0) != nil
        }.fleetMayChange,
        "update.healthy_seconds": number(\.updateHealthySeconds, 10...3600, "seconds from 10 to 3600"),
        "update.dpkg_status": path(\.updateDpkgStatus),
        "diag.chunk_bytes": integer(\.diagChunkBytes, 256...(1 << 20)),
        "diag.max_bundle_bytes": integer(\.diagMaxBundleBytes, (64 << 10)...(64 << 20)),
    ]

    private typealias Field<T> = WritableKeyPath<DaemonConfig, T> & Sendable

    private static func integer(_ field: Field<Int>, _ range: ClosedRange<Int>) -> Key {
        let expected = "expected an integer from \(range.lowerBound) to \(range.upperBound)"
        return Key(
            apply: { config, value in
                guard case .integer(let number) = value, range.contains(number) else { return expected }
                config[keyPath: field] = number
                return nil
            },
            show: { .integer($0[keyPath: field]) })
    }

    private static func number(_ field: Field<Double>, _ range: ClosedRange<Double>, _ expected: String) -> Key {
        Key(
            apply: { config, value in
                let number: Double
                switch value {
                case .double(let value): number = value
                case .integer(let value): number = Double(value)
                default: return "expected \(expected)"
                }
                guard range.contains(number) else { return "expected \(expected)" }
                config[keyPath: field] = number
                return nil
            },
            show: { .double($0[keyPath: field]) })
    }

    private static func rate(_ field: Field<Double>) -> Key {
        number(field, 0.001...10, "a rate in hertz from 0.001 to 10")
    }

    private static func flag(_ field: Field<Bool>) -> Key {
        Key(
            apply: { config, value in
                guard case .bool(let flag) = value else { return "expected true or false" }
                config[keyPath: field] = flag
                return nil
            },
            show: { .bool($0[keyPath: field]) })
    }

    /// A string key; `accepts` narrows which strings are valid, `expected` says which in the error.
    private static func string(_ field: Field<String>, _ expected: String, accepts: @escaping @Sendable (String) -> Bool = { _ in true }) -> Key {
        Key(
            apply: { config, value in
                guard case .string(let text) = value, accepts(text) else { return "expected \(expected)" }
                config[keyPath: field] = text
                return nil
            },
            show: { .string($0[keyPath: field]) })
    }

    private static func text(_ field: Field<String>) -> Key { string(field, "a string") }

    private static func path(_ field: Field<String>) -> Key {
        string(field, "an absolute path") { $0.hasPrefix("/") }
    }

    private static func optionalPath(_ field: Field<String>, none: String) -> Key {
        string(field, "an absolute path, or \"\" for \(none)") { $0.isEmpty || $0.hasPrefix("/") }
    }

    private static func choice<T: RawRepresentable<String> & CaseIterable & Sendable>(_ field: Field<T>) -> Key {
        Key(
            apply: { config, value in
                guard case .string(let text) = value, let choice = T(rawValue: text) else {
                    return "expected one of \(T.allCases.map(\.rawValue).joined(separator: ", "))"
                }
                config[keyPath: field] = choice
                return nil
            },
            show: { .string($0[keyPath: field].rawValue) })
    }
}
