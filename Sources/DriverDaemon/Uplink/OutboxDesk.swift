import DriverAPI
import DriverDomain
import DriverStore
import JSONRPC
import Logging

/// The `outbox.*` methods' owner: the queue as the store has it, and the uplink that sends it (none: no backend).
struct OutboxDesk: MethodOwner, Sendable {
    let uplink: Uplink?
    let outbox: Outbox
    let clock: DaemonClock
    /// The unit's certificate (nil: none, username and password only): when the backend refuses it, the queue says so.
    let identity: @Sendable () -> UnitIdentityStatus?

    func register(in router: inout RPCRouter) {
        router.register(Methods.outboxStatus) { [self] _, _ in try status() }
        router.register(Methods.outboxFlush) { [self] _, _ in
            guard let uplink else { throw APIError.unavailable("no backend is configured (backend.url or --backend)") }
            await uplink.flush()
            return try status()
        }
        router.register(Methods.outboxDeadLetters) { [outbox] _, _ in
            let dead = try outbox.newestDeadItems(limit: DeadLetterList.shown)
            return DeadLetterList(items: dead.items.map {
                DeadLetter(taskId: $0.taskId, kind: $0.kind.rawValue, idempotencyKey: $0.idempotencyKey,
                           answer: $0.backendAnswer ?? "", refusedAt: $0.finishedAt)
            }, total: dead.total)
        }
    }

    /// Throws when the store cannot be read: a queue that cannot be counted is an error, never an empty one.
    func status(maxAge: Duration = .zero) throws -> OutboxStatus {
        guard let uplink else { return OutboxStatus(depth: try outbox.depth(maxAge: maxAge), now: clock.now().time, monotonic: clock.monotonic) }
        var status = try uplink.status(maxAge: maxAge)
        let now = clock.now()
        status.lastError = Self.lastError(status.lastError, identity: identity(), now: now.time, clockTrusted: now.source != .unsynced)
        return status
    }

    /// The link's last error said by its cause when the unit's certificate is the cause (refused, revoked, or expired on a
    /// trusted clock): the transport's words ("connection reset") are then only the last attempt's detail.
    static func lastError(_ error: String?, identity: UnitIdentityStatus?, now: Double, clockTrusted: Bool) -> String? {
        guard let error, let identity else { return error }
        let cause: String
        switch identity.state {
        case .revoked:
            cause = "the fleet revoked this unit's certificate"
        case .refused:
            cause = "the backend refused this unit's certificate: \(identity.reason ?? "no reason given"); check backend.claim_token"
        case .enrolled, .enrolling:
            guard let notAfter = identity.notAfter, CertificateRenewal.hasExpired(notAfter: notAfter, now: now, clockTrusted: clockTrusted) else { return error }
            cause = "the unit's certificate expired at \(TextFormat.UTC(notAfter).iso8601): the backend refuses this unit until it is renewed"
        }
        return "\(cause) (the last attempt: \(error))"
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
