import BackendClient
import DriverAPI
import DriverDomain
import DriverStore
import JSONRPC
import Logging

/// `outbox.status`, `outbox.flush`, `auth.login`.
enum UplinkHandlers {
    static func register(in router: inout RPCRouter, uplink: Uplink?, outbox: Outbox, clock: DaemonClock) {
        router.register(Methods.outboxStatus) { _, _ in try status(uplink, outbox, clock: clock) }
        router.register(Methods.outboxFlush) { _, _ in
            guard let uplink else { throw APIError.unavailable("no backend is configured (backend.url or --backend)") }
            await uplink.flush()
            return try uplink.status()
        }
        router.register(Methods.authLogin) { params, _ in
            guard let uplink else { throw APIError.unavailable("no backend is configured (backend.url or --backend)") }
            guard !params.username.isEmpty, !params.password.isEmpty else {
                throw APIError.invalidParams("username and password must not be empty")
            }
            do {
                let tokens = try await uplink.login(username: params.username, password: params.password)
                return LoginResult(driverId: tokens.driverId, expiresAt: tokens.expiresAt)
            } catch let error as BackendClientError where error.errorClass != .transient {
                throw APIError(.permissionDenied, "the backend refused the login: \(error.body?.error.message ?? error.reason)")
            } catch let error as BackendClientError {
                throw APIError.unavailable("the backend cannot be reached: \(error.reason)")
            }
        }
    }

    /// Throws when the store cannot be read: a queue that cannot be counted is an error, never an empty one.
    static func status(_ uplink: Uplink?, _ outbox: Outbox, clock: DaemonClock, maxAge: Duration = .zero) throws -> OutboxStatus {
        if let uplink { return try uplink.status(maxAge: maxAge) }
        return OutboxStatus(depth: try outbox.depth(maxAge: maxAge), now: clock.now().time, monotonic: clock.monotonic)
    }
}

extension OutboxStatus {
    /// The queue as the store has it, and the link as the uplink's machine sees it (none: no backend
    /// configured). `now` is the trusted stamp time (stored rows are stamped with it); the machine keeps
    /// monotonic times, shown on today's timeline, so a wall-clock step moves neither.
    init(
        depth: Outbox.Depth, now: Double, monotonic: Double, backend: String? = nil, machine: UplinkStateMachine? = nil,
        transport: UplinkTransport = .none, driverId: String? = nil, driverLanguage: String? = nil
    ) {
        self.init(
            enabled: machine != nil, backend: backend, link: machine?.link.summary ?? .disabled, transport: transport,
            transitions: depth.transitions, proofs: depth.proofs, pings: depth.pings, deadLetters: depth.dead,
            oldestPendingAgeSeconds: depth.oldestPending.map { max(0, now - $0) },
            lastSuccess: machine?.lastSuccessAt.map { now - (monotonic - $0) },
            lastError: machine?.lastError, retryInSeconds: machine?.retryAt.map { max(0, $0 - monotonic) }, driverId: driverId,
            routeChanges: depth.routeChanges, activity: depth.activity, sos: depth.sos, driverLanguage: driverLanguage)
    }
}
