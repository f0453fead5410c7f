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

    func register(in router: inout RPCRouter) {
        router.register(Methods.outboxStatus) { [self] _, _ in try status() }
        router.register(Methods.outboxFlush) { [uplink] _, _ in
            guard let uplink else { throw APIError.unavailable("no backend is configured (backend.url or --backend)") }
            await uplink.flush()
            return try uplink.status()
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
