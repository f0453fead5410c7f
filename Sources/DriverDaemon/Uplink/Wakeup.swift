import Synchronization

/// Sleeps until a deadline or until signalled, on its time base's timers (NIO's on a unit, virtual ones in
/// tests). A signal that comes while nobody waits is kept for the next wait.
final class Wakeup: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        var timer: TimerHandle?
    }

    private let state = Mutex(State())
    private let time: any TimeBase

    init(time: any TimeBase) { self.time = time }

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            state.timer?.cancel()
            state.timer = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns at `deadline` (monotonic seconds), on a signal, or when the task is cancelled.
    func wait(until deadline: Double) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    state.timer = time.schedule(at: deadline) { [self] in
                        let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
                            defer { state.waiter = nil; state.timer = nil }
                            return state.waiter
                        }
                        waiter?.resume()
                    }
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            signal()
        }
    }
}
