import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import Logging
import Synchronization

/// The backend tokens' one owner: the file in the state directory (mode 0600), the tokens in memory, and
/// their login age and expiry on the monotonic clock (so a wall clock that steps expires nothing).
final class TokenStore: Sendable {
    /// What the uplink should do for a token now.
    enum Use: Equatable {
        case valid(String)
        /// The access token expires within a minute: refresh it with this.
        case refresh(StoredTokens)
        /// No token, or a login older than the limit.
        case login(reason: String)
    }

    private struct State {
        var tokens: StoredTokens?
        var times: TokenTimes?
    }

    private let directory: String
    private let clock: DaemonClock
    private let maxLoginAge: Double
    private let state: Mutex<State>
    /// Hears a file the disk would not take (nil: the file's failures are thrown, in tests).
    private let health: StoreHealth?
    private let logger: Logger
    /// Held across a file write and the memory update that follows: a login and a refresh that finish
    /// together would otherwise share the scratch file (one rename fails) or leave the file and memory on
    /// different tokens. Rare and short (one small fsync'd file); nothing else waits on it.
    private let writing = Mutex(())

    init(directory: String, clock: DaemonClock, maxLoginAge: Double, logger: Logger, health: StoreHealth? = nil) {
        self.directory = directory
        self.health = health
        self.logger = logger
        self.clock = clock
        self.maxLoginAge = maxLoginAge
        // Unreadable: logged out until the next login writes a new file (the old one stays for a look until then).
        let tokens = logger.valueOrLog("reading the stored login") { try TokenFile.load(from: directory) } ?? nil
        state = Mutex(State(tokens: tokens, times: tokens.map { TokenTimes($0, clock: clock) }))
    }

    var driverId: String? { state.withLock { $0.tokens?.driverId } }
    var driverLanguage: String? { state.withLock { $0.tokens?.language } }
    var current: StoredTokens? { state.withLock { $0.tokens } }

    func use() -> Use {
        let now = clock.monotonic
        let (tokens, times) = state.withLock { ($0.tokens, $0.times) }
        guard let tokens, let times else { return .login(reason: "no token: log in (driverctl login)") }
        if now - times.loggedIn > maxLoginAge {
            return .login(reason: "the login is older than \(TextFormat.fixed(maxLoginAge / 3600, decimals: 1)) h: log in again")
        }
        return times.expires - now < 60 ? .refresh(tokens) : .valid(tokens.accessToken)
    }

    /// Tokens from a refresh: stamped now, with the login stamped again on the clock of now at the age it has (a
    /// refresh keeps the login's age, whatever clock stamped it first).
    func refreshed(_ response: TokenResponse) -> StoredTokens {
        let now = clock.now(), monotonic = clock.monotonic
        let age = state.withLock { $0.times }.map { monotonic - $0.loggedIn } ?? 0
        return StoredTokens(response, now: now, loggedIn: Stamp(time: now.time - age, source: now.source))
    }

    /// Written to the file (0600, synced, renamed into place), then kept. A disk that cannot take the file (full,
    /// read-only, failing) does not undo a login the backend gave: the tokens are kept in memory (a restart before the
    /// next write would ask for the login again), the store's health hears it, and the next change writes the file.
    func store(_ tokens: StoredTokens) throws {
        try writing.withLock { _ in
            do {
                try TokenFile.save(tokens, in: directory)
            } catch let error as TokenFileError {
                guard let cause = error.cause, let health, health.noteFailure(cause) != nil else { throw error }
                logger.warning("the login is kept in memory only (a restart would ask for it again): \(Store.describeWriteFailure(cause))")
            }
            let times = TokenTimes(tokens, clock: clock)
            state.withLock { $0 = State(tokens: tokens, times: times) }
        }
    }

    /// Forgets the tokens (logout): in memory always; throws when the file cannot be removed (a restart would
    /// bring them back).
    func remove() throws {
        try writing.withLock { _ in
            state.withLock { $0 = State() }
            try TokenFile.remove(from: directory)
        }
    }

    /// The trusted clock changed its source (GPS time arrived, NTP synchronised): the tokens' stamps mean
    /// something else on the monotonic clock now.
    func clockSourceChanged() {
        let tokens = current
        let times = tokens.map { TokenTimes($0, clock: clock) }
        state.withLock { $0.times = times }
    }
}

/// A login's age and a token's expiry on the monotonic clock: computed from their stamps and the trusted
/// clock when the tokens are loaded or stored (and again when the clock's source changes), then compared with
/// the monotonic clock only.
///
/// Stamps are compared with the clock only when both come from the same clock or both tell true time (NTP or
/// GPS): a login stamped with GPS time and read back at the next start against an unsynchronised system clock days
/// ahead is not days old. Such an age is unknown until the clock is trusted (`clockSourceChanged`): counted from
/// now, and the access token refreshed at its next use (which stamps it on the clock of now).
struct TokenTimes: Sendable, Equatable {
    var loggedIn: Double
    var expires: Double

    init(_ tokens: StoredTokens, clock: DaemonClock) {
        self.init(tokens, now: clock.now(), monotonic: clock.monotonic)
    }

    init(_ tokens: StoredTokens, now: Stamp, monotonic: Double) {
        // The same clock, or two that both tell true time.
        func comparable(_ source: TimeSource?) -> Bool { source == now.source || (now.source != .unsynced && source != .unsynced) }
        let login = tokens.loggedIn ?? now
        loggedIn = comparable(login.source) ? monotonic - (now.time - login.time) : monotonic
        expires = comparable(tokens.expiresSource) ? monotonic + (tokens.expiresAt - now.time) : monotonic
    }
}
