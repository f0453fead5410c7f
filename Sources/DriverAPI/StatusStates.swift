/// The states that status answers report, as enums both ends share (their raw values are the wire names).

/// The link to gpsd and the receiver behind it.
public enum GPSLinkState: String, Sendable, Codable, Equatable, CaseIterable {
    /// Opening a connection to gpsd.
    case connecting
    /// Watching gpsd; usable fixes arrive.
    case connected
    /// gpsd answers but no usable fix comes (a tunnel, a cold start, no antenna, one stale fix repeated).
    case noFix
    /// gpsd is unreachable or went away; the reader retries with backoff.
    case lost
}

/// Whether the vehicle moves, as the motion detector judges it.
public enum Motion: String, Sendable, Codable, Equatable, CaseIterable {
    case unknown, moving, stationary
}

/// The sampling rates in force: the normal ones, or the battery saver's.
public enum BatteryMode: String, Sendable, Codable, Equatable, CaseIterable {
    case normal, saver
}

/// How gpsd is watched: every fix, paused between samples, or released so the receiver may sleep.
public enum GPSWatch: String, Sendable, Codable, Equatable, CaseIterable {
    case continuous, periodic, released
}

/// The ignition input.
public enum Ignition: String, Sendable, Codable, Equatable, CaseIterable {
    case on, off
}

/// The driving-safety gate: `stopping` is at or below the limit for less than the settle time (still closed);
/// `unknown` has no fresh speed (treated as moving unless the ignition is off).
public enum SafetyState: String, Sendable, Codable, Equatable, CaseIterable {
    case stationary, stopping, moving, unknown
}

/// The backend link as the uplink sees it; `disabled` without a backend.
public enum UplinkLink: String, Sendable, Codable, Equatable, CaseIterable {
    case idle, online, backingOff, authRequired, disabled
}

/// How the uplink reaches the backend now; `none` without a backend.
public enum UplinkTransport: String, Sendable, Codable, Equatable, CaseIterable {
    case websocket, https, none
}
