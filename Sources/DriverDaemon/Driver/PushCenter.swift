import BackendContract
import DriverAPI
import DriverStore
import FoundationEssentials
import JSONRPC
import Logging
import Synchronization

/// Pushes from the backend on their way to front ends (design brief §3.5): kept in the store until a front
/// end acknowledges them, sent again to every new subscriber, held while the vehicle moves (a summary goes
/// instead), and routed only on shift.
actor PushCenter {
    let box: PushBox
    let hub: EventHub
    let safety: Safety
    let shift: Shift
    let logger: Logger
    /// Pushes not yet shown, for `agent.status` without a database read on every call.
    nonisolated let heldCount: Mutex<Int>

    init(box: PushBox, hub: EventHub, safety: Safety, shift: Shift, logger: Logger) {
        clock = shift.clock
        self.box = box
        self.hub = hub
        self.safety = safety
        self.shift = shift
        self.logger = logger
        heldCount = Mutex((logger.valueOrLog("counting the held pushes") { try box.pending() } ?? []).filter { !$0.delivered }.count)
    }

    let clock: DaemonClock

    /// The kinds front ends get; ETA pushes only refresh the next-stop card, configuration pushes and requests are the unit's.
    static func record(_ push: Push, now: Double) -> PushRecord? {
        let title: String
        switch push.kind {
        case .taskAssigned: title = "New order \(push.taskId ?? "")"
        case .routeChanged: title = push.taskId.map { "Route changed for \($0)" } ?? "Stop order changed by dispatch"
        case .taskCancelled: title = "Order \(push.taskId ?? "") cancelled"
        case .customerMessage: title = push.taskId.map { "Message about \($0)" } ?? "Message from dispatch"
        case .eta, .configUpdate, .updateAvailable, .fleetRequest: return nil
        }
        return PushRecord(
            id: Int64(push.id), kind: push.kind.rawValue, taskId: push.taskId, message: push.message, title: title,
            interruptive: true, delivered: false, receivedAt: now)
    }

    /// The kind of a local push raised when the vehicle leaves a destination with its task unfinished.
    static let leftUnfinishedKind = "STOP_LEFT_UNFINISHED"

    /// The topic a kept push goes out on: the daemon's own interruptions have topics of their own.
    static func topic(_ record: PushRecord) -> Event<PushEvent> {
        record.kind == leftUnfinishedKind ? Events.stopLeftUnfinished : Events.push
    }

    /// An interruption the daemon raises itself, kept and held like the backend's pushes. Its id is negative
    /// (the backend's grow from 1), so neither can take the other's.
    func raise(kind: String, taskId: String?, title: String) {
        let now = clock.now().time
        // Unreadable: no id can be chosen that takes none of the kept ones' (keeping it would fail as well).
        guard let pending = logger.valueOrLog("raising the \(kind) notice", { try box.pending() }) else { return }
        let lowest = pending.map(\.id).min() ?? 0
        let record = PushRecord(
            id: min(lowest, 0) - 1, kind: kind, taskId: taskId, message: nil, title: title, interruptive: true, delivered: false, receivedAt: now)
        do {
            _ = try box.keep(record)
        } catch {
            logger.error("cannot keep the \(kind) notice: \(Store.describeWriteFailure(error))")
            return
        }
        deliverHeld()
    }

    func received(_ push: Push) {
        guard let record = Self.record(push, now: clock.now().time) else { return }
        do {
            guard try box.keep(record) else { return }
        } catch {
            logger.error("cannot keep push \(push.id): \(Store.describeWriteFailure(error))")
            return
        }
        deliverHeld()
    }

    /// Sends what may go out now: everything undelivered while the vehicle stands on shift, else a summary.
    func deliverHeld() {
        guard let pending = logger.valueOrLog("reading the held pushes", { try box.pending() }) else { return }
        let held = pending.filter { !$0.delivered }
        heldCount.withLock { $0 = held.count }
        guard shift.isOn, !held.isEmpty else { return }
        guard safety.isOpen else {
            publishSummary(pending)
            return
        }
        for record in held { hub.publish(Self.topic(record), Self.event(record)) }
        // Not marked: they go out again to the next subscriber, which a screen shows once (by id).
        if logger.valueOrLog("marking pushes delivered", { try box.markDelivered(held.map(\.id)) }) != nil { heldCount.withLock { $0 = 0 } }
    }

    /// A front end subscribed to `push` (or `stop.leftUnfinished`): it gets every unacknowledged one of its
    /// topics (or the summary while driving).
    func subscribed(_ connection: RPCConnection, topics: [String]) {
        guard shift.isOn, let pending = logger.valueOrLog("reading the pushes for a subscriber", { try box.pending() }), !pending.isEmpty else { return }
        guard safety.isOpen else {
            hub.send(Events.pushSummary, Self.summary(pending, gateOpen: false), to: connection)
            return
        }
        let sent = pending.filter { topics.contains(Self.topic($0).topic) }
        for record in sent { hub.send(Self.topic(record), Self.event(record), to: connection) }
        if logger.valueOrLog("marking pushes delivered", { try box.markDelivered(sent.filter { !$0.delivered }.map(\.id)) }) != nil {
            heldCount.withLock { $0 = pending.filter { !$0.delivered }.count - sent.filter { !$0.delivered }.count }
        }
    }

    func acknowledge(_ id: Int) throws -> PushSummary {
        guard let record = try box.push(id: Int64(id)) else { throw APIError(.notFound, "no unacknowledged push \(id)") }
        if record.interruptive { try safety.require("acknowledging this message") }
        try box.acknowledge(id: Int64(id))
        let pending: [PushRecord]
        do {
            pending = try box.pending()
        } catch {
            throw APIError(.internalError, "push \(id) acknowledged, but the pushes left cannot be read: \(Store.describeWriteFailure(error))")
        }
        heldCount.withLock { $0 = pending.filter { !$0.delivered }.count }
        let summary = Self.summary(pending, gateOpen: safety.isOpen && shift.isOn)
        // Every front end learns what is left: a screen drops the push another front end acknowledged.
        hub.publish(Events.pushSummary, summary)
        return summary
    }

    func summary() throws -> PushSummary { Self.summary(try box.pending(), gateOpen: safety.isOpen && shift.isOn) }

    @discardableResult
    func removeAll() throws -> Int {
        let removed = try box.removeAll()
        heldCount.withLock { $0 = 0 }
        return removed
    }

    private func publishSummary(_ pending: [PushRecord]) {
        hub.publish(Events.pushSummary, Self.summary(pending, gateOpen: false))
    }

    static func event(_ record: PushRecord) -> PushEvent {
        PushEvent(
            id: Int(record.id), kind: record.kind, taskId: record.taskId, message: record.message, title: record.title,
            interruptive: record.interruptive, receivedAt: record.receivedAt)
    }

    /// "1 new order, 2 messages": what waits, in words a glance or a voice can take while driving.
    static func summary(_ pending: [PushRecord], gateOpen: Bool) -> PushSummary {
        let counts: [(String, String, String)] = [
            (PushKind.taskAssigned.rawValue, "new order", "new orders"),
            (PushKind.taskCancelled.rawValue, "cancellation", "cancellations"),
            (PushKind.routeChanged.rawValue, "route change", "route changes"),
            (PushKind.customerMessage.rawValue, "message", "messages"),
            (leftUnfinishedKind, "unfinished stop", "unfinished stops"),
        ]
        let parts = counts.compactMap { kind, one, many -> String? in
            let count = pending.filter { $0.kind == kind }.count
            return count == 0 ? nil : "\(count) \(count == 1 ? one : many)"
        }
        // While the gate is closed nothing waiting is shown; once open, nothing is held back.
        return PushSummary(
            pending: pending.count, held: gateOpen ? 0 : pending.filter { !$0.delivered }.count, summary: parts.joined(separator: ", "),
            ids: pending.map { Int($0.id) })
    }
}

/// The `events.*` methods' owner: subscriptions to the event hub, and the pushes kept until a front end acknowledges them.
extension PushCenter: MethodOwner {
    nonisolated func register(in router: inout RPCRouter) {
        router.register(Methods.eventsSubscribe) { [hub] params, connection in
            let unknown = params.topics.filter { !Events.topics.contains($0) }
            guard unknown.isEmpty, !params.topics.isEmpty else {
                throw APIError.invalidParams("unknown topic \(unknown.first ?? "(none)"); topics: \(Events.topics.joined(separator: ", "))")
            }
            return SubscribeResult(topics: hub.subscribe(connection, to: params.topics))
        }
        router.register(Methods.eventsAck) { [self] params, _ in try await acknowledge(params.id) }
        router.register(Methods.eventsPending) { [self] _, _ in try await summary() }
    }
}
