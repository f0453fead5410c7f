/// Result of `agent.describe`.
public struct AgentDescription: Codable, Sendable, Equatable {
    public var apiMajor: Int
    public var apiMinor: Int
    public var daemonVersion: String

    public init(apiMajor: Int, apiMinor: Int, daemonVersion: String) {
        self.apiMajor = apiMajor
        self.apiMinor = apiMinor
        self.daemonVersion = daemonVersion
    }
}

/// Params of `agent.setLogLevel`.
public struct SetLogLevelParams: Codable, Sendable, Equatable {
    public var level: LogLevel

    public init(level: LogLevel) { self.level = level }
}

/// Result of `agent.setLogLevel`.
public struct SetLogLevelResult: Codable, Sendable, Equatable {
    public var previous: LogLevel
    public var current: LogLevel

    public init(previous: LogLevel, current: LogLevel) {
        self.previous = previous
        self.current = current
    }
}

/// Log levels, as swift-log and syslog know them.
public enum LogLevel: String, Codable, Sendable, CaseIterable {
    case trace, debug, info, notice, warning, error, critical
}

// MARK: Methods

extension Methods {
    /// driverctl: `driverctl describe`.
    ///
    /// Params: none. Result:
    ///
    /// ```json
    /// {"apiMajor": 1, "apiMinor": 0, "daemonVersion": "0.1.0"}
    /// ```
    public static let agentDescribe = Method<NoParams, AgentDescription>("agent.describe", mutating: false, screen: true)

    /// driverctl: `driverctl status`.
    ///
    /// Params: none. Result: a summary with one section per subsystem. A subsystem this build does not have yet
    /// reports `{"available": false, "reason": "..."}`; later releases fill the sections in. `gps` is the result of
    /// `gps.status`; `sampling` is described below.
    ///
    /// ```json
    /// {
    ///   "daemonVersion": "0.1.0", "apiMajor": 1, "apiMinor": 1, "uptimeSeconds": 12.5,
    ///   "rpc": {"socketPath": "/run/driverd/driverd.sock", "socketActivated": true,
    ///           "openConnections": 3, "requestsServed": 42},
    ///   "gps": {"available": true, "gpsd": "127.0.0.1:2947", "link": "connected", "...": "as gps.status"},
    ///   "sampling": {"available": true, "samplingHz": 1, "policyHz": 0.1, "batteryMode": "normal",
    ///                "watch": "continuous", "ignition": "on",
    ///                "requests": [{"connection": 7, "pid": 4242, "uid": 1000, "hz": 1}]},
    ///   "outbox": {"available": true},
    ///   "link": {"available": true},
    ///   "shift": {"available": false, "reason": "..."},
    ///   "uplink": {"...": "as outbox.status (API 1.2)"}
    /// }
    /// ```
    ///
    /// Since API 1.4 `agent.status` also has `shiftStatus` (as `shift.status`) and `safety`: `{"state": "moving",
    /// "speed": 12.1, "limit": 4.47, "heldPushes": 1}` (`state` is `stationary`, `stopping` (at or below the limit for
    /// less than 3 s: still closed), `moving` or `unknown`: no fix, or one older than `safety.stale_fix_seconds` or 1.5
    /// sampling intervals). Since API 1.9 it also says whether the gate is `open` and, while it is closed, the daemon's
    /// `reason` (what a screen shows on its disabled buttons): `"open": false, "reason": "pull over to complete: the
    /// vehicle is moving (12.1 m/s)"`; the `safety.changed` notification carries the same object each time the gate
    /// opens or closes.
    ///
    /// Since API 1.16 `agent.status` has `identity`, the unit's own certificate from the fleet's CA (absent for a unit
    /// with neither a certificate nor `backend.claim_token`):
    ///
    /// ```json
    /// "identity": {"state": "enrolled", "subject": "CN=driverd-1591467da4711cd8", "serial": "7a5563c2b8b7…", "notAfter": 1798496220}
    /// ```
    ///
    /// `state` is `enrolled` (every request and the WebSocket present the certificate), `enrolling` (a claim token is
    /// configured and the backend has not answered; `reason` says the last failure) or `refused` (the backend refused
    /// the claim token, `reason` names its answer; asked again hourly, everything queued stays). `driverctl status`
    /// shows it as the `unit` row.
    ///
    /// Since API 1.6 `agent.status` also has `clock`, where time stamps come from:
    ///
    /// ```json
    /// "clock": {"source": "gps", "kernelSynchronized": false, "now": 1795852800.2, "systemClockOffset": -848966400,
    ///           "gpsTimeKnown": true, "gpsTimeOffset": 0}
    /// ```
    ///
    /// `source` is `ntp` (the kernel says the system clock is synchronised, and it is not before this release),
    /// `gps` (GPS time carried forward on the monotonic clock: the system clock is not synchronised) or `unsynced`
    /// (neither yet: the system clock as it is, which may be years off). `systemClockOffset` is the system clock
    /// minus `now`; `gpsTimeOffset` GPS time minus `now` when GPS time is known. Every record the daemon stamps
    /// (pings, driver actions, proofs, journal entries in `DRIVERD_TIME` and `DRIVERD_TIME_SOURCE`) says which
    /// source its stamp came from; durations never use these clocks but the monotonic one.
    ///
    /// `sampling`: `samplingHz` is the rate in force (the policy's, raised by live requests, capped at the saver
    /// moving rate in battery-saver mode); `policyHz` the policy's own (1 Hz moving, 0.1 Hz stationary; 0.2 Hz and
    /// 1/60 Hz in saver mode); `batteryMode` `normal` or `saver`; `watch` how gpsd is watched (`continuous`,
    /// `periodic`: quiet between samples, `released`: gpsd may power the receiver down); `ignition` `on`, `off` or
    /// absent without an ignition input; `requests` the live rate requests.
    public static let agentStatus = Method<NoParams, AgentStatus>("agent.status", mutating: false, screen: true)

    /// driverctl: `driverctl log-level LEVEL`.
    ///
    /// **Mutating.** Params: `{"level": "trace" | "debug" | "info" | "notice" | "warning" | "error" | "critical"}`.
    /// Result: `{"previous": "info", "current": "debug"}`. Lasts until the daemon restarts.
    public static let agentSetLogLevel = Method<SetLogLevelParams, SetLogLevelResult>(
        "agent.setLogLevel", mutating: true)

    /// driverctl: `driverctl health`.
    ///
    /// Params: none. Result: the unit's health as its report to the backend carries it (`UnitHealth`) and what is wrong
    /// with it, worst first, in the words of docs/OPERATIONS.md (`findings`; `forDriver`: the screen says it as "call
    /// the office": a store that cannot save, a certificate refused, revoked or expired, changes the backend refused,
    /// no GPS receiver on shift). The unit's own view: silence and a release behind are the backend's to say.
    ///
    /// ```json
    /// {"health": {"daemonVersion": "0.1.0", "onShift": true, "restarts": [{"startedAt": 1796540000, "cause": "crash"}],
    ///             "store": {"condition": "full", "canSave": false, "freeBytes": 0, "...": "as agent.status's store"},
    ///             "queue": {"items": 2, "pings": 340, "deadLetters": 0, "oldestAgeSeconds": 95},
    ///             "gps": {"link": "connected", "lastFixAgeSeconds": 1}, "nextReportWithin": 1860, "...": "..."},
    ///  "findings": [{"rule": "store-full", "severity": "attention", "forDriver": true,
    ///                "words": "storage full (0.0 MB free): this unit cannot save; free space on /var/lib/driverd"}]}
    /// ```
    public static let agentHealth = Method<NoParams, AgentHealth>("agent.health", mutating: false, screen: true, since: 18)

    /// This file's methods, in `Methods.all`.
    static let agent: [MethodDescriptor] = [agentDescribe.descriptor, agentStatus.descriptor, agentSetLogLevel.descriptor, agentHealth.descriptor]
}
