import BackendContract
import DriverStore
import Logging
import Synchronization

/// Pushes from the backend on their way in: each is handed on once (the newest id is kept, in memory and in
/// the store, so a reconnect's catch-up and polling start after it), and polling, while the WebSocket is
/// down, runs at most every `pollInterval` seconds, the first `socketGrace` after the socket closed (on a lossy link it
/// closes for a second or two, and its reconnect's catch-up brings what a poll would; a longer wait would hold a push
/// back: measured, a fleet request's bundle 45 s late at 30 % loss with 30 s).
///
/// The backend numbers each driver's pushes on their own, so the newest id is the logged-in driver's: a unit that
/// two drivers share keeps a cursor for each (`push_cursor`), and a driver who logs in continues from theirs.
final class PushInbox: Sendable {
    private struct State {
        var driver: String?
        var lastId: Int
        var lastPollAt = -Double.infinity
        /// When the WebSocket last closed (monotonic; never open: -infinity).
        var socketClosedAt = -Double.infinity
        /// Pushes were passed over and could not be fetched: a poll is due even with the WebSocket open.
        var behind = false
    }

    static let pollInterval = 30.0
    static let socketGrace = 5.0
    private let cursors: PushCursors
    private let state: Mutex<State>
    private let logger: Logger

    init(store: Store, driver: String?, logger: Logger) {
        let cursors = PushCursors(store: store)
        self.cursors = cursors
        self.logger = logger
        state = Mutex(State(driver: driver, lastId: driver.map { Self.lastId(of: $0, in: cursors, logger: logger) } ?? 0))
    }

    /// A cursor that cannot be read starts from the first push: pushes seen before come again (fleet requests and
    /// messages are recognised by their ids), rather than any passed over.
    private static func lastId(of driver: String, in cursors: PushCursors, logger: Logger) -> Int {
        logger.valueOrLog("reading \(driver)'s push cursor") { try cursors.lastId(driver: driver) } ?? 0
    }

    var lastId: Int { state.withLock { $0.lastId } }

    /// `driver` logged in: their pushes continue from their own cursor.
    func follow(driver: String) {
        guard state.withLock({ $0.driver }) != driver else { return }
        let lastId = Self.lastId(of: driver, in: cursors, logger: logger)
        state.withLock { $0 = State(driver: driver, lastId: lastId) }
    }

    /// What a push that came in is to this unit.
    enum Arrival: Equatable {
        /// Seen before (a replay, a second path): dropped.
        case seen
        /// The next one: taken (marked seen in memory, so a second copy is not handed on), in `driver`'s count.
        case taken(driver: String?)
        /// Beyond the next one (the backend numbers a driver's pushes one by one): those after `lastId` are to
        /// be fetched and handled first; nothing is marked.
        case afterGap(lastId: Int)
    }

    /// `push` as it came in. `gapsFilled`: the pushes before it were fetched already, so a gap left is one the
    /// backend no longer holds (or never numbered), and the push is taken.
    func accept(_ push: Push, gapsFilled: Bool = false) -> Arrival {
        state.withLock { state -> Arrival in
            guard push.id > state.lastId else { return .seen }
            if push.id > state.lastId + 1, !gapsFilled { return .afterGap(lastId: state.lastId) }
            state.lastId = push.id
            return .taken(driver: state.driver)
        }
    }

    /// `push`, `driver`'s, was handed on (and stored by whoever keeps it): a reconnect's catch-up starts after it.
    /// Written after the push itself, so a power cut never keeps this id and loses the push; an ETA only refreshes
    /// the card and costs no flash write (seen again after a restart, it harms nothing).
    func handled(_ push: Push, driver: String?) throws {
        guard push.kind != .eta, let driver else { return }
        try cursors.advance(driver: driver, to: push.id)
    }

    /// Pushes before one that came could not be fetched: the next poll fetches them.
    func fellBehind() { state.withLock { $0.behind = true } }

    /// A WebSocket connection that had opened closed at `now` (monotonic).
    func socketClosed(now: Double) { state.withLock { $0.socketClosedAt = now } }

    /// The id to poll after when a poll is due at `now` (monotonic), else nil: while the WebSocket has been down
    /// `socketGrace` (or was never open), or after pushes were passed over.
    func pollDue(now: Double, socketOpen: Bool) -> Int? {
        state.withLock { state in
            let socketAway = !socketOpen && now - state.socketClosedAt >= Self.socketGrace
            guard socketAway || state.behind, now - state.lastPollAt >= Self.pollInterval else { return nil }
            state.lastPollAt = now
            return state.lastId
        }
    }

    /// A poll's pushes were all handled.
    func caughtUp() { state.withLock { $0.behind = false } }
}
