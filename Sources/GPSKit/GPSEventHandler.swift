import DriverAPI

/// How the reader should go on after an event.
public enum GPSPace: Sendable, Equatable {
    /// Keep reading at the usual cadence (and keep a pause already asked for).
    case `continue`
    /// Read continuously from now on: drop any pause (movement is suspected, or the rate went up).
    case stream
    /// Quiet gpsd for `seconds` (wall time); `release` lets gpsd close the device and rest the receiver.
    case pause(seconds: Double, release: Bool)
}

/// What the handler's housekeeping asks of the reader.
public struct GPSHousekeeping: Sendable, Equatable {
    /// A change of pace decided off the fixes, by work handed to the handler since the last call (a rate request,
    /// the vehicle's battery protection, a shift); nil: none.
    public var pace: GPSPace?
    /// Seconds until the housekeeping is next due (nil: nothing due).
    public var dueIn: Double?

    public init(pace: GPSPace? = nil, dueIn: Double? = nil) {
        self.pace = pace
        self.dueIn = dueIn
    }
}

/// Receives the reader's events on the reader's own thread, in order, and decides the pace.
///
/// The hot path: it runs for every fix, so it returns quickly. Its state is the reader's thread's alone: work from
/// other threads waits in the handler's inbox and is taken in `housekeeping`, which `GPSDReader.wake()` brings on.
public protocol GPSEventHandler: Sendable {
    func handle(_ event: GPSEvent) -> GPSPace
    /// The reader found nothing new and is about to block until gpsd sends something. Returns how soon to
    /// call `idle` again even if gpsd stays silent (nil: no need), so pending work has a deadline.
    func idle() -> Double?
    /// Work handed in from other threads, and work due on a schedule of its own whatever gpsd does (the daemon
    /// reads its power inputs and commits held pings by their window): called at every wake-up of the reader, its
    /// pauses included, so it rides on wake-ups that happen anyway. The reader sleeps no longer than `dueIn`.
    func housekeeping() -> GPSHousekeeping
}

extension GPSEventHandler {
    public func housekeeping() -> GPSHousekeeping { GPSHousekeeping() }
}
