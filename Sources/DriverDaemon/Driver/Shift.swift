import DriverAPI
import DriverStore
import Foundation
import Synchronization

/// The driver's shift: off shift no location is recorded or sent and no push reaches a front end. Kept in
/// the store, so a restart keeps it; read on the GPS thread for every fix, so lock-guarded.
final class Shift: Sendable {
    private let state: Mutex<ShiftStatus>
    private let outbox: Outbox
    let clock: DaemonClock

    init(outbox: Outbox, autoStart: Bool, clock: DaemonClock) {
        self.outbox = outbox
        self.clock = clock
        func stored(_ key: String) -> Double? { (try? outbox.value(key)).flatMap { $0.flatMap(Double.init) } }
        var status = ShiftStatus(
            onShift: (try? outbox.value("shift_on")) == "1", startedAt: stored("shift_started_at"), endedAt: stored("shift_ended_at"))
        if autoStart && !status.onShift { status = ShiftStatus(onShift: true, startedAt: clock.now().time, endedAt: nil) }
        state = Mutex(status)
        try? persist(status)
    }

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
        if changed { try persist(status) }
        return (status, changed)
    }

    private func persist(_ status: ShiftStatus) throws {
        try outbox.setValue(status.onShift ? "1" : "0", for: "shift_on")
        if let started = status.startedAt { try outbox.setValue(String(started), for: "shift_started_at") }
        if let ended = status.endedAt { try outbox.setValue(String(ended), for: "shift_ended_at") }
    }
}
