/// Result of `gps.status`, and the `gps` section of `agent.status`.
public struct GPSStatus: Codable, Sendable, Equatable {
    public var available: Bool
    /// gpsd's address, `HOST:PORT`.
    public var gpsd: String
    /// connecting, connected, noFix (connected, but no usable fix for longer than the sampling interval explains)
    /// or lost.
    public var link: GPSLinkState
    /// Whether sampled fixes are recorded as pings.
    public var tracking: Bool
    /// Fixes received from gpsd since start.
    public var fixesSeen: Int
    /// Pings committed to the store since start, and per motion mode.
    public var pingsRecorded: Int
    public var pingsByMotion: [String: Int]
    /// Pings waiting for the next group commit.
    public var pingsPending: Int
    public var lastFix: Fix?
    /// Seconds since the last accepted fix arrived (monotonic clock), nil before the first.
    public var lastFixAge: Double?
    public var motion: Motion
    /// Times the fix stream broke off (a tunnel, a receiver that lost the sky) and came back.
    public var fixLosses: Int
    /// The last error writing pings, if the last write failed.
    public var lastError: String?
    /// Fixes that passed the quality filter (API 1.6).
    public var fixesAccepted: Int?
    /// Fixes the quality filter rejected, by reason (`FixRejection` names; API 1.6). A rejected fix never
    /// becomes a ping, an action's position, an ETA input or a safety speed.
    public var fixesRejected: [String: Int]?
    /// Times the filter re-anchored on fixes that agreed with each other after rejecting them (API 1.6).
    public var reanchors: Int?

    public init(
        available: Bool = true, gpsd: String, link: GPSLinkState, tracking: Bool, fixesSeen: Int, pingsRecorded: Int,
        pingsByMotion: [String: Int], pingsPending: Int, lastFix: Fix?, lastFixAge: Double?, motion: Motion,
        fixLosses: Int = 0, lastError: String?, fixesAccepted: Int? = nil, fixesRejected: [String: Int]? = nil, reanchors: Int? = nil
    ) {
        self.fixesAccepted = fixesAccepted
        self.fixesRejected = fixesRejected
        self.reanchors = reanchors
        self.fixLosses = fixLosses
        self.available = available
        self.gpsd = gpsd
        self.link = link
        self.tracking = tracking
        self.fixesSeen = fixesSeen
        self.pingsRecorded = pingsRecorded
        self.pingsByMotion = pingsByMotion
        self.pingsPending = pingsPending
        self.lastFix = lastFix
        self.lastFixAge = lastFixAge
        self.motion = motion
        self.lastError = lastError
    }
}

/// The `sampling` section of `agent.status`.
public struct SamplingStatus: Codable, Sendable, Equatable {
    public var available: Bool
    /// The rate in force: the policy's, raised by live requests.
    public var samplingHz: Double
    /// The policy's own rate for the motion and battery mode.
    public var policyHz: Double
    public var batteryMode: BatteryMode
    /// How gpsd is watched: continuous, periodic (paused between samples) or released (receiver may sleep).
    public var watch: GPSWatch
    /// nil without an ignition input.
    public var ignition: Ignition?
    public var requests: [RateRequest]

    public init(
        available: Bool = true, samplingHz: Double, policyHz: Double, batteryMode: BatteryMode, watch: GPSWatch,
        ignition: Ignition?, requests: [RateRequest]
    ) {
        self.available = available
        self.samplingHz = samplingHz
        self.policyHz = policyHz
        self.batteryMode = batteryMode
        self.watch = watch
        self.ignition = ignition
        self.requests = requests
    }
}

/// A live rate request: it lasts as long as the connection that made it.
public struct RateRequest: Codable, Sendable, Equatable {
    public var connection: UInt64
    public var pid: Int32
    public var uid: UInt32
    public var hz: Double

    public init(connection: UInt64, pid: Int32, uid: UInt32, hz: Double) {
        self.connection = connection
        self.pid = pid
        self.uid = uid
        self.hz = hz
    }
}

/// Params of `gps.requestRate`. `hz` 0 withdraws the caller's request.
public struct RequestRateParams: Codable, Sendable, Equatable {
    public var hz: Double
    public init(hz: Double) { self.hz = hz }
}

public struct RequestRateResult: Codable, Sendable, Equatable {
    public var requestedHz: Double
    public var effectiveHz: Double
    public init(requestedHz: Double, effectiveHz: Double) {
        self.requestedHz = requestedHz
        self.effectiveHz = effectiveHz
    }
}

// MARK: Methods

extension Methods {
    /// driverctl: `driverctl gps`.
    ///
    /// Params: none. Result:
    ///
    /// ```json
    /// {"available": true, "gpsd": "127.0.0.1:2947", "link": "connected", "tracking": true,
    ///  "fixesSeen": 1200, "pingsRecorded": 130, "pingsByMotion": {"moving": 10, "stationary": 120},
    ///  "pingsPending": 2, "lastFix": {"...": "a fix, as gps.fix"}, "lastFixAge": 0.5, "motion": "stationary"}
    /// ```
    ///
    /// `link` is `connecting`, `connected`, `noFix` (gpsd answers, but no usable fix came for longer than the
    /// sampling interval explains: the receiver reports no fix, sends nothing, or repeats one stale fix) or `lost`
    /// (gpsd unreachable; the daemon retries with backoff). `lastFixAge` is seconds since the last accepted fix
    /// arrived (absent before the first); `motion` is `unknown`, `moving` or `stationary`; `fixLosses` counts the
    /// times the fix stream broke off and came back (a tunnel); `lastError` appears when the last write of pings
    /// failed (they stay pending).
    ///
    /// Since API 1.6: `fixesAccepted`, `fixesRejected` and `reanchors`. Every fix passes a quality filter first; a
    /// rejected one never becomes a ping, an action's position, an ETA input or a safety speed. `fixesRejected`
    /// counts them by reason: `mode` (no 2D/3D fix), `horizontalError` (`eph` over `gps.max_horizontal_error`),
    /// `time` (not after the last accepted fix: a repeated or stale fix, a clock that went back), `rollover` (a whole
    /// number of 1024-week GPS eras behind the reference clock), `speed` (a reported speed over 70 m/s), `jump`
    /// (reaching it from the last accepted fix would take over 70 m/s beyond both fixes' error estimates, or far
    /// more than the receiver's own speed). `reanchors` counts the times rejected fixes kept agreeing with each
    /// other and the filter followed them (an outlier accepted after a tunnel, a receiver clock that was reset).
    ///
    /// ```json
    /// "fixesAccepted": 1190, "fixesRejected": {"jump": 2, "time": 12}, "reanchors": 0
    /// ```
    public static let gpsStatus = Method<NoParams, GPSStatus>("gps.status", mutating: false, screen: true)

    /// The latest fix; `unavailable` (1002) before the first.
    ///
    /// driverctl: `driverctl gps` (the last fix); `driverctl gps --follow` subscribes to `gps.fix`.
    ///
    /// Params: none. Result: the latest fix, or error `1002` before the first one.
    ///
    /// ```json
    /// {"time": 1795852800.5, "latitude": 49.0189, "longitude": 12.0927, "altitude": 350, "speed": 8.25,
    ///  "track": 87.5, "climb": 0, "horizontalError": 4, "verticalError": 6, "mode": 3, "satellitesUsed": 9}
    /// ```
    ///
    /// `time` is seconds since 1970 (UTC) from the receiver; `speed` m/s; `track` degrees from true north;
    /// `horizontalError`/`verticalError` metres; `mode` 2 or 3. Fields the receiver did not report are absent.
    public static let gpsFix = Method<NoParams, Fix>("gps.fix", mutating: false)

    /// driverctl: none: a screen asks while it shows the vehicle moving on a map; a command would hold the rate only
    /// for its own short life.
    ///
    /// **Mutating.** Params: `{"hz": 1}` (0 to 10; 0 withdraws). Raises the sampling rate to at least `hz` for as long
    /// as the calling connection lives. Result: `{"requestedHz": 1, "effectiveHz": 1}`.
    public static let gpsRequestRate = Method<RequestRateParams, RequestRateResult>("gps.requestRate", mutating: true)

    /// This file's methods, in `Methods.all`.
    static let gps: [MethodDescriptor] = [
        gpsStatus.descriptor, gpsFix.descriptor, gpsRequestRate.descriptor,
    ]
}
