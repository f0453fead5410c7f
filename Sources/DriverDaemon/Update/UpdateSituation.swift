import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Since when the ignition has been off, as the update desk saw it (a maintenance window needs minutes of it).
final class PowerHistory: Sendable {
    private let offSince = Mutex<Double?>(nil)

    /// Seconds the ignition has been off by `monotonic`; nil while it is on or unknown.
    func offSeconds(ignition: Bool?, monotonic: Double) -> Double? {
        offSince.withLock { since in
            guard ignition == false else {
                since = nil
                return nil
            }
            let start = since ?? monotonic
            since = start
            return monotonic - start
        }
    }
}

/// The local hour of a Unix time, from libc and /etc/localtime (the static binary has no ICU time zones).
enum LocalHour {
    static func now(_ time: Double) -> Int {
        var seconds = time_t(time)
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return Int(time / 3600) % 24 }
        return Int(parts.tm_hour)
    }
}
