import BackendContract
import DriverStore
import Synchronization

/// Pushes from the backend on their way in: each is handed on once (the newest id is kept, in memory and in
/// the store, so a reconnect's catch-up and polling start after it), and polling, while the WebSocket is
/// down, runs at most every `pollInterval` seconds.
final class PushInbox: Sendable {
    private struct State {
        var lastId: Int
        var lastPollAt = -Double.infinity
    }

    static let pollInterval = 30.0
    private let unitState: UnitState
    private let state: Mutex<State>

    init(unitState: UnitState) {
        self.unitState = unitState
        state = Mutex(State(lastId: (try? unitState.read().lastPushId) ?? 0))
    }

    var lastId: Int { state.withLock { $0.lastId } }

    /// Whether `push` is new (then it is marked seen in memory: a second copy is not handed on).
    func accept(_ push: Push) -> Bool {
        state.withLock { state -> Bool in
            guard push.id > state.lastId else { return false }
            state.lastId = push.id
            return true
        }
    }

    /// `push` was handed on (and stored by whoever keeps it): a reconnect's catch-up starts after it. Written after
    /// the push itself, so a power cut never keeps this id and loses the push; an ETA only refreshes the card and
    /// costs no flash write (seen again after a restart, it harms nothing).
    func handled(_ push: Push) {
        guard push.kind != .eta else { return }
        _ = try? unitState.update { $0.lastPushId = max($0.lastPushId, push.id) }
    }

    /// The id to poll after when a poll is due at `now` (monotonic), else nil.
    func pollDue(now: Double) -> Int? {
        state.withLock { state in
            guard now - state.lastPollAt >= Self.pollInterval else { return nil }
            state.lastPollAt = now
            return state.lastId
        }
    }
}
