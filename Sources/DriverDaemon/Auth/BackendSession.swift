import BackendClient
import BackendContract
import DriverStore
import Logging
import Synchronization

/// The sender's judgement of the backend, which every owner's call through the session follows (the uplink: its
/// machine knows whether the backend asked for quiet, answered at all, or the fleet's spread start has reached this
/// unit), and the sender's part in a driver's login and logout.
protocol BackendGate: AnyObject, Sendable {
    /// Throws a transient `BackendClientError` naming the wait when no owner's call may knock now.
    func mayCall() throws
    /// An owner's call heard "not now" (a Retry-After): the sender waits too.
    func heardNotNow(_ error: BackendClientError)
    /// The sender's last attempt reached the backend.
    var isOnline: Bool { get }
    /// Nothing goes until a login (the driver logged out, or the credentials were refused): the configured credentials
    /// are not used behind the driver's back.
    var loginRequired: Bool { get }
    /// A login came back from the backend, before its tokens are kept: another driver over the one logged in ends
    /// that one's session first (a throw refuses the login: no driver may see another's orders).
    func driverArriving(_ tokens: StoredTokens, previous: String?) async throws
    /// The login's tokens are kept: what waited for a login goes.
    func driverLoggedIn(_ tokens: StoredTokens)
    /// The tokens are gone (`driverId`: whose they were); what is queued stays for the same driver's next login.
    func driverLoggedOut(_ driverId: String?)
}

/// The unit's session with the backend: the driver's tokens (login, refresh, logout; `TokenStore` keeps them) and the
/// calls owners make with them (`authorized`). Owners hold the session for their calls, never the sender; the sender
/// (`Uplink`) takes its tokens here too, and judges through `BackendGate` when a call may knock.
final class BackendSession: Sendable {
    struct Credentials: Sendable {
        var username: String
        var password: String
    }

    let client: any BackendAPI
    let tokens: TokenStore
    /// The unit's configured login (`backend.username`), used when no driver logged in or a refresh is refused.
    let credentials: Credentials?
    private let clock: DaemonClock
    private let logger: Logger
    /// The token fetch (login or refresh) under way, which every caller meanwhile awaits.
    private let tokenFetch = Mutex<Task<String, any Error>?>(nil)
    private let gate = Mutex<WeakGate>(WeakGate())

    private struct WeakGate: @unchecked Sendable {
        weak var gate: (any BackendGate)?
    }

    struct NeedsLogin: Error { let reason: String }

    init(
        client: any BackendAPI, stateDirectory: String, credentials: Credentials?, maxLoginAge: Double, clock: DaemonClock, logger: Logger,
        health: StoreHealth? = nil
    ) {
        self.client = client
        self.credentials = credentials
        self.clock = clock
        self.logger = logger
        tokens = TokenStore(directory: stateDirectory, clock: clock, maxLoginAge: maxLoginAge, logger: logger, health: health)
    }

    /// The sender whose judgement the session's calls follow (it holds the session; the session does not hold it).
    func judged(by gate: any BackendGate) { self.gate.withLock { $0.gate = gate } }

    private var judge: (any BackendGate)? { gate.withLock { $0.gate } }

    var isOnline: Bool { judge?.isOnline ?? false }

    /// Runs a request with a valid access token (refreshed or logged in as needed). The sender judges whether the
    /// backend is there: no owner's call knocks while a `Retry-After` runs (only the sender's SOS does), while the
    /// backend is away (the sender's last attempt got no answer, until its next), or before the sender's first turn
    /// after a start; an owner that hears "not now" tells the sender.
    func authorized<T: Sendable>(_ request: (any BackendAPI, String) async throws -> T) async throws -> T {
        try judge?.mayCall()
        do {
            return try await request(client, try await validToken())
        } catch let error as BackendClientError where error.retryAfter != nil {
            judge?.heardNotNow(error)
            throw error
        }
    }

    /// The access token, refreshed when it expires within a minute; a login with the configured credentials
    /// when there is none, or the login is too old. One fetch at a time: the sender, the WebSocket and the owners
    /// asking together (at a start) make one login, not one each.
    func validToken() async throws -> String {
        if case .valid(let token) = tokens.use() { return token }
        let fetch = tokenFetch.withLock { current -> Task<String, any Error> in
            if let current { return current }
            let fetch = Task { try await self.fetchToken() }
            current = fetch
            return fetch
        }
        defer { tokenFetch.withLock { if $0 == fetch { $0 = nil } } }
        return try await fetch.value
    }

    /// The configured credentials, unless a login is required: a call that began before a logout must not log the unit
    /// back in (the driver's queued items would go).
    private var automaticCredentials: Credentials? { judge?.loginRequired == true ? nil : credentials }

    private func fetchToken() async throws -> String {
        switch tokens.use() {
        case .valid(let token):
            return token
        case .login(let reason):
            guard let credentials = automaticCredentials else { throw NeedsLogin(reason: reason) }
            return try await login(username: credentials.username, password: credentials.password).accessToken
        case .refresh(let stored):
            do {
                let refreshed = tokens.refreshed(try await client.refresh(refreshToken: stored.refreshToken))
                try tokens.store(refreshed)
                return refreshed.accessToken
            } catch let error as BackendClientError where error.errorClass != .transient {
                guard let credentials = automaticCredentials else { throw NeedsLogin(reason: "the token expired and could not be refreshed: log in again") }
                return try await login(username: credentials.username, password: credentials.password).accessToken
            }
        }
    }

    /// Logs in and stores the tokens (0600); the sender goes again (its next success fetches the route).
    @discardableResult
    func login(username: String, password: String) async throws -> StoredTokens {
        let stored = StoredTokens(try await client.login(username: username, password: password), now: clock.now())
        try await judge?.driverArriving(stored, previous: tokens.driverId)
        try tokens.store(stored)
        judge?.driverLoggedIn(stored)
        logger.info("logged in", metadata: ["driver": "\(stored.driverId)"])
        return stored
    }

    /// Forgets the tokens; what is queued stays for the same driver. Throws when the token file cannot be removed
    /// (the tokens are forgotten in memory all the same).
    func logout() throws {
        let driverId = tokens.driverId
        let removal = Result { try tokens.remove() }
        judge?.driverLoggedOut(driverId)
        logger.info("logged out", metadata: ["driver": "\(driverId ?? "none")"])
        try removal.get()
    }
}
