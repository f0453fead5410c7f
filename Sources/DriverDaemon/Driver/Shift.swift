import DriverAPI
import DriverStore
import FoundationEssentials
import Logging
import Synchronization

/// The driver's shift: off shift no location is recorded or sent and no push reaches a front end. Kept in
/// the store, so a restart keeps it; read on the GPS thread for every fix, so lock-guarded.
final class Shift: Sendable {
    private let state: Mutex<ShiftStatus>
    private let unitState: UnitState
    /// Told after the shift started or ended (owners whose work waits for a shift: the vehicle's reports).
    private let listeners = Mutex<[@Sendable (Bool) -> Void]>([])
    let clock: DaemonClock

    init(unitState: UnitState, autoStart: Bool, clock: DaemonClock, logger: Logger) {
        self.unitState = unitState
        self.clock = clock
        // Unreadable: off shift (or on, with shift.auto_start) until the driver says otherwise; said in the journal.
        let stored = logger.valueOrLog("reading the shift") { try unitState.read() } ?? UnitStateRecord()
        var status = ShiftStatus(onShift: stored.shiftOn, startedAt: stored.shiftStartedAt, endedAt: stored.shiftEndedAt)
        state = Mutex(status)
        if autoStart && !status.onShift {
            status = ShiftStatus(onShift: true, startedAt: clock.now().time, endedAt: nil)
            state.withLock { $0 = status }
            _ = logger.valueOrLog("storing the shift's automatic start") { try persist(status) }
        }
    }

    func whenChanged(_ action: @escaping @Sendable (Bool) -> Void) { listeners.withLock { $0.append(action) } }

    /// Shift times are stamps: the trusted clock.
    func now() -> Double { clock.now().time }

    var isOn: Bool { state.withLock { $0.onShift } }
    var status: ShiftStatus { state.withLock { $0 } }

    /// Starts or ends the shift; returns the new status and whether it changed.
    func set(on: Bool, now: Double) throws -> (ShiftStatus, changed: Bool) {
        let (status, changed) = state.withLock { status -> (ShiftStatus, Bool) in
            guard status.onShift != on else { return (status, false) }
            status = on ? ShiftStatus(onShift: true, startedAt: now, endedAt: nil) : ShiftStatus(onShift: false, startedAt: status.startedAt, endedAt: now)
            return (status, true)
        }
        if changed {
            try persist(status)
            for listener in listeners.withLock({ $0 }) { listener(on) }
        }
        return (status, changed)
    }

    /// The three fields in one transaction: a crash never leaves a shift on with the last one's end.
    private func persist(_ status: ShiftStatus) throws {
        try unitState.update { record in
            record.shiftOn = status.onShift
            record.shiftStartedAt = status.startedAt ?? record.shiftStartedAt
            record.shiftEndedAt = status.endedAt ?? record.shiftEndedAt
        }
    }
}
