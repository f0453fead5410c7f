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

/// Receives the reader's events on the reader's own thread, in order, and decides the pace.
///
/// The hot path: it runs for every fix, so implementations are lock-guarded classes that return quickly.
public protocol GPSEventHandler: Sendable {
    func handle(_ event: GPSEvent) -> GPSPace
    /// The reader found nothing new and is about to block until gpsd sends something. Returns how soon to
    /// call `idle` again even if gpsd stays silent (nil: no need), so pending work has a deadline.
    func idle() -> Double?
    /// Work due on a schedule of its own whatever gpsd does (the daemon reads its power inputs and commits held
    /// pings by their window): called at every wake-up of the reader, its pauses included, so it rides on wake-ups
    /// that happen anyway. Returns the seconds until it is next due; the reader sleeps no longer than that (nil:
    /// nothing due).
    func housekeeping() -> Double?
}

extension GPSEventHandler {
    public func housekeeping() -> Double? { nil }
}
