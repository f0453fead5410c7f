import Foundation
@testable import DriverDaemon
import Synchronization

/// Virtual time for the in-process daemon: its clocks stand still until a test advances them, and its timers
/// (the uplink's cadence and backoff, the workflow's sync retries, a configuration's healthy run, a fleet's log
/// level) fire as time passes their deadlines. No test waits for real seconds to pass.
final class ManualTime: TimeBase {
    private struct Timer {
        let id: Int
        let deadline: Double
        let action: @Sendable () -> Void
    }

    private struct State {
        var monotonic = 1000.0
        var wall: Double
        var timers: [Timer] = []
        var nextId = 0
    }

    private let state: Mutex<State>

    init(wall: Double = Date().timeIntervalSince1970) { state = Mutex(State(wall: wall)) }

    var monotonic: Double { state.withLock { $0.monotonic } }
    var wall: Double { state.withLock { $0.wall } }
    var wallSynchronized: Bool { true }

    func schedule(at deadline: Double, _ action: @escaping @Sendable () -> Void) -> TimerHandle {
        let (id, due) = state.withLock { state -> (Int, Bool) in
            state.nextId += 1
            guard deadline > state.monotonic else { return (state.nextId, true) }
            state.timers.append(Timer(id: state.nextId, deadline: deadline, action: action))
            return (state.nextId, false)
        }
        // Due already: fired at once, but not inside the caller's call (it may hold a lock the action takes).
        if due { Task { action() } }
        return TimerHandle { [weak self] in self?.cancel(id) }
    }

    private func cancel(_ id: Int) { state.withLock { $0.timers.removeAll { $0.id == id } } }

    /// Moves time forward by `seconds`, firing every timer that falls due on the way, earliest first.
    func advance(by seconds: Double) {
        let target = state.withLock { $0.monotonic } + seconds
        while true {
            let due = state.withLock { state -> Timer? in
                guard let index = state.timers.indices.min(by: { state.timers[$0].deadline < state.timers[$1].deadline }),
                      state.timers[index].deadline <= target
                else { return nil }
                let timer = state.timers.remove(at: index)
                state.wall += timer.deadline - state.monotonic
                state.monotonic = timer.deadline
                return timer
            }
            guard let due else { break }
            due.action()
        }
        state.withLock { state in
            state.wall += target - state.monotonic
            state.monotonic = target
        }
    }
}
