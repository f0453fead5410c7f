import DriverAPI
import DriverDomain
import FoundationEssentials
import Synchronization

/// Owns the pure `SafetyGate`: fed by every fix (on the GPS thread) and the ignition input, asked by the
/// handlers of attention-needing actions. Lock-guarded; the lock is never held across a call out.
final class Safety: Sendable {
    private let gate: Mutex<SafetyGate>
    private let onChange = Mutex<(@Sendable (SafetyGate.Change) -> Void)?>(nil)

    private let clock: DaemonClock

    init(limit: Double, staleAfter: Double, clock: DaemonClock) {
        gate = Mutex(SafetyGate(limit: limit, staleAfter: staleAfter))
        self.clock = clock
    }

    /// The gate measures durations (settle time, fix age): the monotonic clock, never the wall clock.
    func now() -> Double { clock.monotonic }

    /// Called when the vehicle comes to a stand (held pushes go out then) or starts to move (front ends switch
    /// to their driving view).
    func whenChanged(_ action: @escaping @Sendable (SafetyGate.Change) -> Void) { onChange.withLock { $0 = action } }

    func observe(speed: Double?, nextFixWithin: Double) {
        let change = gate.withLock { $0.observe(speed: speed, now: now(), nextFixWithin: nextFixWithin) }
        if let change { onChange.withLock { $0 }?(change) }
    }

    /// The vehicle's own speed (its adapter), polled every `nextWithin` seconds; nil: the adapter stopped answering.
    func observeVehicle(speed: Double?, nextWithin: Double) {
        let change = gate.withLock { gate in
            speed == nil ? gate.vehicleLost(now: now()) : gate.observe(speed: speed, now: now(), nextFixWithin: nextWithin, source: .vehicle)
        }
        if let change { onChange.withLock { $0 }?(change) }
    }

    func setIgnition(_ ignition: Bool?) {
        let change = gate.withLock { $0.setIgnition(ignition, now: now()) }
        if let change { onChange.withLock { $0 }?(change) }
    }

    var isOpen: Bool { gate.withLock { $0.isOpen(now: now()) } }

    /// Seconds until a stopping vehicle counts as standing (nil: not stopping): the reader looks again then.
    var settlesIn: Double? { gate.withLock { $0.settlesIn(now: now()) } }

    /// Throws the dedicated error unless the vehicle stands.
    func require(_ action: String) throws {
        let (open, state, speed) = gate.withLock { gate in (gate.isOpen(now: now()), gate.state(now: now()), gate.speed) }
        guard !open else { return }
        throw APIError(.drivingGate, "pull over to complete: \(action) waits until the vehicle stands; \(Self.why(state, speed: speed))")
    }

    private static func why(_ state: SafetyState, speed: Double?) -> String {
        switch state {
        case .moving: "the vehicle is moving (\(TextFormat.fixed(speed ?? 0, decimals: 1)) m/s)"
        case .stopping: "the vehicle has only just stopped"
        default: "the vehicle's speed is unknown"
        }
    }

    func status(heldPushes: Int) -> SafetyStatus {
        gate.withLock { gate in
            let now = now()
            let state = gate.state(now: now)
            let open = gate.isOpen(now: now)
            return SafetyStatus(
                state: state, speed: gate.speed, limit: gate.limit, heldPushes: heldPushes, open: open,
                reason: open ? nil : "pull over to complete: \(Self.why(state, speed: gate.speed))")
        }
    }
}
