import BackendContract
import DriverStore
import Synchronization

/// Pushes from the backend on their way in: each is handed on once (the newest id is kept, in memory and in
/// the store, so a reconnect's catch-up and polling start after it), and polling, while the WebSocket is
/// down, runs at most every `pollInterval` seconds.
///
/// The backend numbers each driver's pushes on their own, so the newest id is the logged-in driver's: a unit that
/// two drivers share keeps a cursor for each (`push_cursor`), and a driver who logs in continues from theirs.
final class PushInbox: Sendable {
    private struct State {
        var driver: String?
        var lastId: Int
        var lastPollAt = -Double.infinity
    }

    static let pollInterval = 30.0
    private let cursors: PushCursors
    private let state: Mutex<State>

    init(store: Store, driver: String?) {
        let cursors = PushCursors(store: store)
        self.cursors = cursors
        state = Mutex(State(driver: driver, lastId: driver.flatMap { try? cursors.lastId(driver: $0) } ?? 0))
    }

    var lastId: Int { state.withLock { $0.lastId } }

    /// `driver` logged in: their pushes continue from their own cursor.
    func follow(driver: String) {
        guard state.withLock({ $0.driver }) != driver else { return }
        let lastId = (try? cursors.lastId(driver: driver)) ?? 0
        state.withLock { $0 = State(driver: driver, lastId: lastId) }
    }

    /// A new push taken in, and the driver whose count it is in.
    struct Taken {
        let driver: String?
    }

    /// `push` when it is new (then it is marked seen in memory: a second copy is not handed on), else nil.
    func accept(_ push: Push) -> Taken? {
        state.withLock { state -> Taken? in
            guard push.id > state.lastId else { return nil }
            state.lastId = push.id
            return Taken(driver: state.driver)
        }
    }

    /// `push`, `driver`'s, was handed on (and stored by whoever keeps it): a reconnect's catch-up starts after it.
    /// Written after the push itself, so a power cut never keeps this id and loses the push; an ETA only refreshes
    /// the card and costs no flash write (seen again after a restart, it harms nothing).
    func handled(_ push: Push, driver: String?) {
        guard push.kind != .eta, let driver else { return }
        try? cursors.advance(driver: driver, to: push.id)
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
