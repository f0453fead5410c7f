import Synchronization

/// A one-shot signal: "the socket is bound". The notifier waits on it before `READY=1`.
final class Readiness: Sendable {
    private let state = Mutex<(ready: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func markListening() {
        let waiters = state.withLock { state in
            state.ready = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func waitUntilListening() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                if state.ready { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}
