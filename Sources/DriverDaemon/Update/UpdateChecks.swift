import DriverAPI
import Synchronization

/// The update loop's inbox: a check asked for (a push, the link's return, `update.check`) with the callers waiting for
/// its outcome, and the loop's wake-ups. One check answers everyone who asked before it began; a loop that ended
/// answers the rest that driverd is stopping.
final class UpdateChecks: Sendable {
    typealias Waiter = CheckedContinuation<Void, any Error>

    private struct State {
        var asked = false
        var waiters: [Waiter] = []
        var closed = false
    }

    private let state = Mutex(State())
    /// Wakes the loop: a check asked for, the shift's end (the window may have opened), a step's timer.
    let wakes: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() { (wakes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1)) }

    func wake() { continuation.yield() }

    /// A check at the loop's next turn.
    func ask() {
        state.withLock { $0.asked = true }
        wake()
    }

    /// A check at the loop's next turn; returns once it is done, or throws its error.
    func askAndWait() async throws {
        try await withCheckedThrowingContinuation { (waiter: Waiter) in
            let queued = state.withLock { state -> Bool in
                guard !state.closed else { return false }
                state.asked = true
                state.waiters.append(waiter)
                return true
            }
            guard queued else { return waiter.resume(throwing: APIError(.unavailable, "driverd is stopping")) }
            wake()
        }
    }

    /// The loop's: whether a check was asked for, and who waits for it (both cleared).
    func take() -> (asked: Bool, waiters: [Waiter]) {
        state.withLock { state in
            defer { (state.asked, state.waiters) = (false, []) }
            return (state.asked, state.waiters)
        }
    }

    /// The loop ended: whoever still waits hears so, and later callers at once.
    func close() {
        for waiter in state.withLock({ state in defer { state = State(closed: true) }; return state.waiters }) {
            waiter.resume(throwing: APIError(.unavailable, "driverd is stopping"))
        }
    }
}
