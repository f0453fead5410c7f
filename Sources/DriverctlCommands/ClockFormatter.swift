import DriverAPI

/// Where the daemon's time stamps come from, for a person.
enum ClockFormatter {
    /// `gps time (system clock not synchronised, 26.9 years behind)`
    static func text(_ clock: ClockStatus) -> String {
        let system = clock.kernelSynchronized ? "synchronised" : "not synchronised"
        let offset = abs(clock.systemClockOffset) < 0.5 ? "" : ", " + TextFormat.clockOffset(clock.systemClockOffset)
        switch clock.source {
        case .ntp:
            // A receiver whose time disagrees with a synchronised clock is worth a word (an era off, a replay).
            let gps = clock.gpsTimeOffset.flatMap { abs($0) >= 10 ? "; GPS time " + TextFormat.clockOffset($0) : nil } ?? ""
            return "ntp (system clock synchronised\(offset)\(gps))"
        case .gps: return "gps time (system clock \(system)\(offset))"
        case .unsynced: return "unsynced: the system clock is not synchronised and no GPS time is known yet; stamps may be wrong"
        }
    }
}
