#if canImport(Glibc)
import Glibc
#endif
import BackendClient
import CTimex
import DriverAPI
import DriverDomain
import Synchronization

/// The daemon's clocks, in one place. Stamps (pings, driver actions, proofs, logs) come from `now()`: the
/// system clock when the kernel says it is synchronised, otherwise GPS time carried forward on the monotonic
/// clock (the pure `TrustedClock` decides). Durations (backoff, batch cadence, token age, settle times,
/// deadlines) come from `monotonic`, CLOCK_BOOTTIME, which never steps and counts suspend: a wall clock that
/// jumps by years changes no retention, expiry or order.
final class DaemonClock: Sendable {
    private struct State {
        var trusted = TrustedClock()
        /// The kernel's answer and when it was read (monotonic): asked at most every `kernelRefresh` seconds.
        var kernel: (synchronized: Bool, readAt: Double)?
        var lastSource: TimeSource?
    }

    static let kernelRefresh = 10.0
    private let state = Mutex(State())
    /// Told when the source changes, `(from, to, systemClockOffset)`: the log, and the identity's renewal (which
    /// judges a certificate only on a trusted clock).
    private let onSourceChange = Mutex<[@Sendable (TimeSource?, TimeSource, Double) -> Void]>([])

    /// The clocks and timers underneath: the system's on a unit, a virtual time in tests.
    let time: any TimeBase

    init(time: any TimeBase = SystemTime()) { self.time = time }

    var monotonic: Double { time.monotonic }

    /// Returns once `seconds` have passed; throws if the task is cancelled first.
    func sleep(for seconds: Double) async throws { try await time.sleep(for: seconds) }

    /// A wake-up on this clock's timers.
    func wakeup() -> Wakeup { Wakeup(time: time) }

    /// Why the kernel's clock state cannot be read (nil: it can), said once at start: without it every stamp
    /// comes from GPS time, or is `unsynced`.
    static func kernelStateUnreadable() -> String? {
        let result = ctimex_synchronized(nil)
        return result < 0 ? "adjtimex: \(String(cString: strerror(-result)))" : nil
    }

    func whenSourceChanges(_ action: @escaping @Sendable (TimeSource?, TimeSource, Double) -> Void) {
        onSourceChange.withLock { $0.append(action) }
    }

    private func reading(_ state: inout State) -> TrustedClock.Reading {
        let monotonic = time.monotonic
        let synchronized: Bool
        if let kernel = state.kernel, monotonic - kernel.readAt < Self.kernelRefresh {
            synchronized = kernel.synchronized
        } else {
            synchronized = time.wallSynchronized
            state.kernel = (synchronized, monotonic)
        }
        return TrustedClock.Reading(wall: time.wall, monotonic: monotonic, kernelSynchronized: synchronized)
    }

    /// The time to stamp with now, and its source.
    func now() -> Stamp {
        let (stamp, change) = state.withLock { state -> (Stamp, (TimeSource?, TimeSource, Double)?) in
            let reading = reading(&state)
            let stamp = state.trusted.stamp(reading)
            defer { state.lastSource = stamp.source }
            return (stamp, state.lastSource == stamp.source ? nil : (state.lastSource, stamp.source, reading.wall - stamp.time))
        }
        if let change { for listener in onSourceChange.withLock({ $0 }) { listener(change.0, change.1, change.2) } }
        return stamp
    }

    /// An accepted fix, handled now: GPS time becomes known (or better known).
    func observeFix(time: Double) {
        state.withLock { $0.trusted.observeFix(time: time, monotonic: self.time.monotonic) }
    }

    /// The receiver's timeline was re-anchored backwards: what was learnt from it is void.
    func forgetGPS() { state.withLock { $0.trusted.forgetGPS() } }

    /// The time the backend's certificate is judged at: the system clock's once the kernel vouches for it, GPS
    /// time while it does not, and with neither only what this release knows (the time is later than its date).
    func certificateTime() -> CertificateTime {
        let stamp = now()
        switch stamp.source {
        case .ntp: return .system
        case .gps: return .known(stamp.time)
        case .unsynced: return .atLeast(TrustedClock.earliestPlausible)
        }
    }

    func status() -> ClockStatus {
        state.withLock { state in state.trusted.status(reading(&state)) }
    }
}
