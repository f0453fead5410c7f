/// Why a fix from the receiver was not used (`gps.status` counts them by this name). A rejected fix never
/// becomes a ping, an action's position, an ETA input or a safety speed.
public enum FixRejection: String, Sendable, Codable, CaseIterable, Equatable {
    /// gpsd reported no 2D or 3D fix (mode < 2).
    case mode
    /// The receiver's own error estimate (`eph`) is over the configured limit.
    case horizontalError
    /// The fix time is equal to or older than the last accepted fix's (a repeated stale fix, a receiver whose
    /// clock went back).
    case time
    /// The fix time is a whole number of 1024-week GPS eras behind the reference time (a receiver with the
    /// week-rollover bug).
    case rollover
    /// The receiver reports a speed no vehicle reaches.
    case speed
    /// Reaching it from the last accepted fix would take a speed no vehicle reaches (a spike, multipath).
    case jump
}

/// Where a time stamp came from (`timeSource` in records, the local API and the backend contract).
public enum TimeSource: String, Sendable, Codable, CaseIterable, Equatable {
    /// The system clock, which the kernel says is synchronised (NTP, chrony with GPS as reference …).
    case ntp
    /// GPS time carried forward on the monotonic clock: the system clock is not synchronised (or disagrees
    /// with GPS).
    case gps
    /// The system clock as it is, unsynchronised and with no GPS time yet: may be wrong by years.
    case unsynced
}

/// The `clock` section of `agent.status` and `diag.report` (API 1.6).
public struct ClockStatus: Codable, Sendable, Equatable {
    /// Where stamps come from now.
    public var source: TimeSource
    /// What the kernel says (`adjtimex`: no `STA_UNSYNC`).
    public var kernelSynchronized: Bool
    /// The time the daemon stamps with now, unix seconds.
    public var now: Double
    /// The system clock minus `now`, seconds (large when the unit booted with a wrong clock).
    public var systemClockOffset: Double
    /// Whether GPS time is known (carried on the monotonic clock since the last accepted fix).
    public var gpsTimeKnown: Bool
    /// GPS time minus `now`, seconds, when GPS time is known: near 0 unless the synchronised system clock and
    /// the receiver disagree (a receiver clock off by whole weeks, a replayed log).
    public var gpsTimeOffset: Double?

    public init(
        source: TimeSource, kernelSynchronized: Bool, now: Double, systemClockOffset: Double, gpsTimeKnown: Bool, gpsTimeOffset: Double? = nil
    ) {
        self.gpsTimeOffset = gpsTimeOffset
        self.source = source
        self.kernelSynchronized = kernelSynchronized
        self.now = now
        self.systemClockOffset = systemClockOffset
        self.gpsTimeKnown = gpsTimeKnown
    }
}
