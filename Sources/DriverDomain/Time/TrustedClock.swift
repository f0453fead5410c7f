import DriverAPI

/// A time stamp and where it came from.
public struct Stamp: Sendable, Equatable {
    /// Unix seconds.
    public var time: Double
    public var source: TimeSource

    public init(time: Double, source: TimeSource) {
        self.time = time
        self.source = source
    }
}

/// Which clock to stamp with, pure. In-vehicle units often boot with no real-time clock (or a drifted one) and
/// NTP over cellular comes late or never, so the system clock is trusted only when the kernel says it is
/// synchronised and it is not before this release existed. Otherwise stamps come from GPS time carried
/// forward on the monotonic clock; with neither, from the system clock as it is, marked `unsynced`.
///
/// A synchronised clock wins over GPS when they disagree: NTP (or chrony disciplined by GPS itself) is right,
/// while a receiver's clock can be whole 1024-week eras off, and gpsd shifts old dates by eras too (the
/// disagreement is shown in `status` for diagnosis).
///
/// GPS time is learnt from accepted fixes: fix time minus the monotonic time the fix was handled at. The
/// fix reaches the daemon some milliseconds to a second after its epoch, never before, so the largest offset
/// of the recent fixes is the best estimate. Durations never come from here: they use the monotonic clock.
public struct TrustedClock: Sendable, Equatable {
    /// What the system says at one moment.
    public struct Reading: Sendable, Equatable {
        /// CLOCK_REALTIME, unix seconds.
        public var wall: Double
        /// CLOCK_BOOTTIME seconds (counts suspend, never steps).
        public var monotonic: Double
        /// `adjtimex` reports the clock synchronised (no `STA_UNSYNC`).
        public var kernelSynchronized: Bool

        public init(wall: Double, monotonic: Double, kernelSynchronized: Bool) {
            self.wall = wall
            self.monotonic = monotonic
            self.kernelSynchronized = kernelSynchronized
        }
    }

    /// No clock that says earlier than this is right: this release did not exist then (2026-01-01 UTC; systemd's
    /// TIME_EPOCH is the same idea). Also the least the time is when nothing vouches for the clock (`CertificateTime`).
    public static let earliestPlausible = 1_767_225_600.0
    static let offsetsKept = 16

    /// GPS time minus monotonic time, the best estimate; nil until a fix was accepted (or one was restored).
    public private(set) var gpsOffset: Double?
    private var recentOffsets: [Double] = []

    public init(gpsOffset: Double? = nil) { self.gpsOffset = gpsOffset }

    /// An accepted fix with time `fixTime` was handled at `monotonic`.
    public mutating func observeFix(time fixTime: Double, monotonic: Double) {
        recentOffsets.append(fixTime - monotonic)
        if recentOffsets.count > Self.offsetsKept { recentOffsets.removeFirst(recentOffsets.count - Self.offsetsKept) }
        gpsOffset = recentOffsets.max()
    }

    /// The receiver's timeline was re-anchored (its clock went back): what was learnt from it is void.
    public mutating func forgetGPS() {
        recentOffsets = []
        gpsOffset = nil
    }

    /// GPS time now, when known.
    public func gpsTime(at monotonic: Double) -> Double? { gpsOffset.map { $0 + monotonic } }

    /// Whether the system clock can be believed at `reading`.
    public func systemClockTrusted(_ reading: Reading) -> Bool {
        reading.kernelSynchronized && reading.wall >= Self.earliestPlausible
    }

    public func stamp(_ reading: Reading) -> Stamp {
        if systemClockTrusted(reading) { return Stamp(time: reading.wall, source: .ntp) }
        if let gps = gpsTime(at: reading.monotonic) { return Stamp(time: gps, source: .gps) }
        return Stamp(time: reading.wall, source: .unsynced)
    }

    public func status(_ reading: Reading) -> ClockStatus {
        let stamp = stamp(reading)
        return ClockStatus(
            source: stamp.source, kernelSynchronized: reading.kernelSynchronized, now: stamp.time,
            systemClockOffset: reading.wall - stamp.time, gpsTimeKnown: gpsOffset != nil,
            gpsTimeOffset: gpsTime(at: reading.monotonic).map { $0 - stamp.time })
    }
}
