/// Result of `diag.report` (API 1.5): everything a support engineer asks for first, in one answer.
///
/// It holds no customer data: the status sections, versions, disk space, the effective configuration with
/// secrets replaced by `<redacted>`, and the daemon's last warnings (whose texts are already free of it).
public struct DiagReport: Codable, Sendable, Equatable {
    /// When the report was made, Unix seconds.
    public var generatedAt: Double
    public var versions: DiagVersions
    /// The same as `agent.status` at that moment (uptime, gps, sampling, outbox and link, shift, safety).
    public var status: AgentStatus
    public var storage: StorageStatus
    public var config: DiagConfig
    /// The most recent warnings and errors since the daemon started, oldest first (at most `warningsKept`).
    public var warnings: [LogRecord]
    /// How many warnings and errors were logged since start, including those no longer kept.
    public var warningsTotal: Int
    /// The vehicle's adapter, as `vehicle.status` (API 1.11): its link, fault codes and the trips whose odometers
    /// disagreed.
    public var vehicle: VehicleStatus?

    public static let warningsKept = 20

    public init(
        generatedAt: Double, versions: DiagVersions, status: AgentStatus, storage: StorageStatus, config: DiagConfig,
        warnings: [LogRecord], warningsTotal: Int, vehicle: VehicleStatus? = nil
    ) {
        self.vehicle = vehicle
        self.generatedAt = generatedAt
        self.versions = versions
        self.status = status
        self.storage = storage
        self.config = config
        self.warnings = warnings
        self.warningsTotal = warningsTotal
    }
}

/// The software the daemon runs with.
public struct DiagVersions: Codable, Sendable, Equatable {
    public var daemon: String
    /// `MAJOR.MINOR` of the local API.
    public var api: String
    /// The SQLite library in use (`sqlite_version()`).
    public var sqlite: String
    /// The libgps API the daemon was built against (`GPSD_API_MAJOR_VERSION.MINOR`).
    public var libgps: String
    /// `uname -sr` and the machine, e.g. "Linux 6.1.0-18-amd64 x86_64".
    public var kernel: String
    /// `PRETTY_NAME` of /etc/os-release, when readable.
    public var os: String?

    public init(daemon: String, api: String, sqlite: String, libgps: String, kernel: String, os: String?) {
        self.daemon = daemon
        self.api = api
        self.sqlite = sqlite
        self.libgps = libgps
        self.kernel = kernel
        self.os = os
    }
}

/// The state directory and the file system it lives on.
public struct StorageStatus: Codable, Sendable, Equatable {
    public var stateDirectory: String
    /// The SQLite database with its write-ahead log, bytes.
    public var databaseBytes: Int64
    /// Space left for the daemon's user (`f_bavail`), bytes; nil when the file system could not be read.
    public var freeBytes: Int64?
    public var totalBytes: Int64?
    /// Stored rows the daemon could not read and set aside (kept in `set_aside_row`, never written over); nil when
    /// none. `setAside` names the newest: the table, when (Unix seconds), and why.
    public var setAsideRows: Int?
    public var setAside: [SetAsideSummary]?

    public init(
        stateDirectory: String, databaseBytes: Int64, freeBytes: Int64?, totalBytes: Int64?, setAsideRows: Int? = nil, setAside: [SetAsideSummary]? = nil
    ) {
        self.stateDirectory = stateDirectory
        self.databaseBytes = databaseBytes
        self.freeBytes = freeBytes
        self.totalBytes = totalBytes
        self.setAsideRows = setAsideRows
        self.setAside = setAside
    }
}

/// One stored row set aside because the daemon could not read it.
public struct SetAsideSummary: Codable, Sendable, Equatable {
    public var table: String
    public var at: Double
    public var reason: String

    public init(table: String, at: Double, reason: String) {
        self.table = table
        self.at = at
        self.reason = reason
    }
}

/// The configuration in effect: every key with its value (file, flags and defaults merged).
public struct DiagConfig: Codable, Sendable, Equatable {
    /// The file the daemon read at start.
    public var path: String
    /// `section.key` to the value in TOML notation; secrets are `"<redacted>"` when set.
    public var effective: [String: String]
    /// Unknown keys and other warnings from reading the file at start.
    public var warnings: [String]
    /// The file as it is now on disk with secret values redacted; nil when it cannot be read.
    public var fileText: String?

    public init(path: String, effective: [String: String], warnings: [String], fileText: String?) {
        self.path = path
        self.effective = effective
        self.warnings = warnings
        self.fileText = fileText
    }
}

/// One log entry kept for diagnostics.
public struct LogRecord: Codable, Sendable, Equatable {
    /// Unix seconds.
    public var time: Double
    /// The swift-log level: warning, error or critical.
    public var level: String
    /// The daemon's subsystem (logger label): gps, uplink, workflow …
    public var subsystem: String
    /// The journald `MESSAGE_ID`, when the entry has one (the message catalog explains it).
    public var messageID: String?
    public var message: String

    public init(time: Double, level: String, subsystem: String, messageID: String?, message: String) {
        self.time = time
        self.level = level
        self.subsystem = subsystem
        self.messageID = messageID
        self.message = message
    }
}

// MARK: Methods

extension Methods {
    /// Versions, status, disk space, the redacted configuration and the last warnings, for support.
    ///
    /// driverctl: `driverctl diag [--bundle FILE]`.
    ///
    /// Since API 1.5. Params: none. Everything support asks for first, with no customer data (`driverctl diag`
    /// prints it as one screen, `--bundle FILE` packs it with the redacted config and the journal). Result:
    ///
    /// - `generatedAt` (Unix seconds);
    /// - `versions`: `daemon`, `api`, `sqlite` (the library in use), `libgps` (the API built against), `kernel`,
    ///   `os` (`PRETTY_NAME`);
    /// - `status`: exactly `agent.status` at that moment (uptime, gps link and last fix age, motion and sampling rate,
    ///   outbox depths and oldest item, link state and last error, shift, safety gate);
    /// - `storage`: `stateDirectory`, `databaseBytes` (database with its WAL), `freeBytes`, `totalBytes` of its file
    ///   system;
    /// - `config`: `path`, `effective` (every key, TOML notation, file and flags and defaults merged), `warnings`
    ///   (unknown keys and contradictions found at start), `fileText` (the file as it is now); secret values
    ///   (`backend.password`, any `*password`, `*token`, `*secret`, `*key`) appear as `"<redacted>"`;
    /// - `warnings`: the last 20 warnings and errors since start (`time`, `level`, `subsystem`, `messageID`,
    ///   `message`), oldest first, and `warningsTotal`.
    public static let diagReport = Method<NoParams, DiagReport>("diag.report", mutating: false)

    /// This file's methods, in `Methods.all`.
    static let diag: [MethodDescriptor] = [diagReport.descriptor]
}
