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
    public static let gpsStatus = Method<NoParams, GPSStatus>("gps.status", mutating: false, screen: true)
    /// The latest fix; `unavailable` (1002) before the first.
    public static let gpsFix = Method<NoParams, Fix>("gps.fix", mutating: false)
    public static let gpsRequestRate = Method<RequestRateParams, RequestRateResult>("gps.requestRate", mutating: true)

    /// This file's methods, in `Methods.all`.
    static let gps: [MethodDescriptor] = [
        gpsStatus.descriptor, gpsFix.descriptor, gpsRequestRate.descriptor,
    ]
}
