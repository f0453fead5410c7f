import BackendClient
import BackendContract
import DispatchSimCore
import DriverAPI
@testable import DriverDaemon
import DriverDomain
@testable import DriverStore
import JSONRPC
import Synchronization
import Testing

/// The uplink, the workflow and the push centre in-process: the daemon as `Daemon.run` assembles it, its
/// methods called through the dispatcher, the backend a stand-in with the reference backend's rules.
@Suite("The daemon in-process", .serialized)
struct InProcessDaemonTests {
    static func routeSynced(_ daemon: InProcessDaemon) async throws {
        try await daemon.waitUntil("the route synced") { try await daemon.call(Methods.routeGet).stops.count == 4 }
    }

    @Test("a driver action is committed, sent once under its key with its stamp's source, and the task is synced")
    func actionToBackend() async throws {
        let backend = StandInBackend()
        let daemon = try InProcessDaemon(backend: backend)
        try await daemon.running {
            try await Self.routeSynced(daemon)
            let accepted = try await daemon.call(Methods.taskAccept, TaskParams(taskId: "task-1001"))
            #expect(accepted.status == .accepted)
            let status = try await daemon.call(Methods.outboxFlush)
            #expect(status.items == 0 && status.link == .online)
            let updates = backend.world.stats.statusUpdates
            #expect(updates.map(\.status) == [.accepted] && updates.first?.timeSource != nil)
            try await daemon.waitUntil("synced") {
                try await daemon.call(Methods.routeGet).tasks.first { $0.id == "task-1001" }?.sync == .synced
            }
        }
    }

    @Test("an outbox that cannot be read is an error, never an empty queue: outbox.status refuses, agent.status says why its outbox section is empty, the status line says so")
    func unreadableOutbox() async throws {
        let daemon = try InProcessDaemon(backend: StandInBackend())
        try await daemon.running {
            try await Self.routeSynced(daemon)
            #expect(try await daemon.call(Methods.agentStatus).outbox.available)
            try daemon.assembly.outbox.store.pool.write { db in try db.execute(sql: "ALTER TABLE outbox_item RENAME TO outbox_item_away") }
            await #expect(throws: RPCClient.Failure.self) { _ = try await daemon.call(Methods.outboxStatus) }
            // agent.status and the status line may use a count a second old.
            try await Task.sleep(for: .milliseconds(1100))
            let status = try await daemon.call(Methods.agentStatus)
            #expect(status.uplink == nil && !status.outbox.available && status.outbox.reason?.contains("outbox_item") == true, "\(status.outbox)")
            #expect(daemon.assembly.statusLine().contains("queue unreadable"))
            try daemon.assembly.outbox.store.pool.write { db in try db.execute(sql: "ALTER TABLE outbox_item_away RENAME TO outbox_item") }
        }
    }

    /// Sees each answer as the uplink reports it, and whether the item was still queued then.
    final class AckProbe: Sendable {
        let outbox: Outbox
        let queuedWhenAcked = Mutex<[Bool]>([])
        let answeredStatuses = Mutex<[TaskStatus?]>([])
        init(outbox: Outbox) { self.outbox = outbox }

        /// The workflow's handler, with the probe looking at each ack first.
        func watching(_ handler: OutboxKindHandler) -> OutboxKindHandler {
            OutboxKindHandler(
                send: handler.send,
                acknowledged: { [self] item, applied in
                    let queued = ((try? outbox.pendingItems(taskId: item.taskId)) ?? []).contains { $0.id == item.id }
                    queuedWhenAcked.withLock { $0.append(queued) }
                    answeredStatuses.withLock { $0.append(applied) }
                    await handler.acknowledged(item, applied)
                },
                refused: handler.refused)
        }
    }

    @Test("the workflow hears an ack, with the status the backend applied, while the item is still queued (a sync merged in between keeps the local status), and the item leaves after")
    func ackBeforeItemLeaves() async throws {
        let backend = StandInBackend()
        let daemon = try InProcessDaemon(backend: backend)
        try await daemon.running {
            try await Self.routeSynced(daemon)
            let probe = AckProbe(outbox: daemon.assembly.outbox)
            daemon.assembly.uplink?.wrapHandler(of: .status, probe.watching)
            for method in [Methods.taskAccept, Methods.taskArrive] {
                _ = try await daemon.call(method, TaskParams(taskId: "task-1001"))
                let status = try await daemon.call(Methods.outboxFlush)
                #expect(status.items == 0)
            }
            #expect(probe.queuedWhenAcked.withLock { $0 } == [true, true])
            // The backend's answer names the status it applied: that is what the task shows as the backend's.
            #expect(probe.answeredStatuses.withLock { $0 } == [.accepted, .arrivedAtStore])
            let task = try #require(try await daemon.call(Methods.routeGet).tasks.first { $0.id == "task-1001" })
            #expect(task.status == .arrivedAtStore && task.backendStatus == .arrivedAtStore && task.sync == .synced, "\(task)")
        }
    }

    @Test("a refused transition becomes a dead letter, the task goes back to the backend's state, and front ends hear it")
    func refusal() async throws {
        let backend = StandInBackend()
        let daemon = try InProcessDaemon(backend: backend)
        try await daemon.running {
            try await Self.routeSynced(daemon)
            let events = try await daemon.subscriber([Events.taskConflict.topic, Events.outboxRefused.topic])
            // The dispatcher cancels the task behind the driver's back; the driver accepts it before the next sync
            // (the link is down meanwhile, so no sync can come first however slow the machine).
            backend.setDown("network unreachable")
            _ = backend.dispatch { world, now in world.cancel(taskId: "task-1001", now: now) }
            _ = try await daemon.call(Methods.taskAccept, TaskParams(taskId: "task-1001"))
            backend.setDown(nil)
            let status = try await daemon.call(Methods.outboxFlush)
            #expect(status.deadLetters == 1 && status.items == 0)
            try await daemon.waitUntil("the conflict told") { !events.all(Events.taskConflict).isEmpty && !events.all(Events.outboxRefused).isEmpty }
            #expect(events.all(Events.outboxRefused).first?.status == 409)
            #expect(events.all(Events.taskConflict).first?.backendStatus == .cancelled)
            #expect(backend.world.stats.statusUpdates.isEmpty)
            // An operator reads the answer on the unit.
            let dead = try await daemon.call(Methods.outboxDeadLetters)
            #expect(dead.total == 1 && dead.items.map(\.taskId) == ["task-1001"] && dead.items.map(\.kind) == ["status"])
            #expect(dead.items.first?.answer.contains("CANCELLED") == true && dead.items.first?.refusedAt != nil)
        }
    }

    @Test("offline, a new stop order waits as a route change (never a proof), and goes when the backend is back")
    func routeChangeOffline() async throws {
        let backend = StandInBackend()
        let daemon = try InProcessDaemon(backend: backend)
        try await daemon.running {
            try await Self.routeSynced(daemon)
            // A new stop order needs the vehicle standing: the ignition is off.
            daemon.assembly.safety.setIgnition(false)
            backend.setDown("network unreachable")
            let order = ["task-1002-pickup", "task-1001-pickup", "task-1001-dropoff", "task-1002-dropoff"]
            let result = try await daemon.call(Methods.routeResequence, ResequenceParams(order: order, confirm: true))
            #expect(result.applied)
            var status = try await daemon.call(Methods.outboxStatus)
            #expect(status.routeChanges == 1 && status.proofs == 0 && status.transitions == 0, "\(status)")
            status = try await daemon.call(Methods.outboxFlush)
            #expect(status.link == .backingOff && status.lastError == "network unreachable")
            backend.setDown(nil)
            status = try await daemon.call(Methods.outboxFlush)
            #expect(status.link == .online && status.routeChanges == 0)
            #expect(backend.world.sequence(driverId: "drv-1") == order)
        }
    }

    @Test("without a login the uplink waits and says so once; a driver's login sends the queue and fetches the route")
    func loginRequired() async throws {
        let backend = StandInBackend()
        let daemon = try InProcessDaemon(backend: backend, credentials: false)
        // Subscribed before the services start: with gpsd unreachable the uplink tries at once (a heartbeat saying
        // so is due) and finds no login.
        let events = try await daemon.subscriber([Events.authRequired.topic])
        try await daemon.running {
            var status = try await daemon.call(Methods.outboxFlush)
            #expect(status.link == .authRequired)
            try await daemon.waitUntil("auth.required told") { events.all(Events.authRequired).count == 1 }
            _ = try await daemon.call(Methods.authLogin, LoginParams(username: "rider1", password: "demo-password"))
            try await Self.routeSynced(daemon)
            status = try await daemon.call(Methods.outboxStatus)
            #expect(status.link == .online && status.driverId == "drv-1")
            // Revoked tokens with no credentials to fall back on: told again, once.
            backend.revokeTokens()
            _ = try await daemon.call(Methods.taskAccept, TaskParams(taskId: "task-1001"))
            status = try await daemon.call(Methods.outboxFlush)
            #expect(status.link == .authRequired && status.transitions == 1)
            try await daemon.waitUntil("auth.required told again") { events.all(Events.authRequired).count == 2 }
        }
    }

    @Test("a push is held while the speed is unknown (a summary instead), and delivered when the vehicle stands")
    func pushHeldThenDelivered() async throws {
        let backend = StandInBackend()
        let daemon = try InProcessDaemon(backend: backend)
        let front = try await daemon.subscriber([Events.push.topic, Events.pushSummary.topic])
        _ = backend.dispatch { world, now in world.message(driverId: "drv-1", taskId: nil, text: "gate code 1234", now: now) }
        try await daemon.running {
            // No WebSocket here: the uplink polls for pushes, the first time at its first attempt.
            try await daemon.waitUntil("the summary") { !front.all(Events.pushSummary).isEmpty }
            #expect(front.all(Events.push).isEmpty)
            #expect(try await daemon.call(Methods.eventsPending).held >= 1)
            // The ignition goes off: the vehicle stands, the gate opens, the held push goes out.
            daemon.assembly.safety.setIgnition(false)
            try await daemon.waitUntil("the push") { !front.all(Events.push).isEmpty }
            #expect(front.all(Events.push).first?.message == "gate code 1234")
        }
    }

    @Test("a push that overtakes older ones (a backend's catch-up out of order): those between are fetched and handled first, none is passed over")
    func pushAfterGap() async throws {
        let backend = StandInBackend()
        let daemon = try InProcessDaemon(backend: backend)
        for text in ["first", "second", "third"] {
            _ = backend.dispatch { world, now in world.message(driverId: "drv-1", taskId: nil, text: text, now: now) }
        }
        let sent = backend.dispatch { world, _ in world.pushes(driverId: "drv-1", after: 0) }
        let uplink = try #require(daemon.assembly.uplink)
        // Not running: no poll fetches them meanwhile; the third comes first.
        await uplink.received(sent[2])
        #expect(try await daemon.call(Methods.eventsPending).ids == [1, 2, 3])
        #expect(uplink.pushes.lastId == 3)
        // The older ones again, late: seen.
        await uplink.received(sent[0])
        #expect(try await daemon.call(Methods.eventsPending).ids == [1, 2, 3])
        // Unreachable, the ones between cannot be fetched: the push waits for the next poll (nothing is marked).
        _ = backend.dispatch { world, now in world.message(driverId: "drv-1", taskId: nil, text: "fourth", now: now) }
        _ = backend.dispatch { world, now in world.message(driverId: "drv-1", taskId: nil, text: "fifth", now: now) }
        let later = backend.dispatch { world, _ in world.pushes(driverId: "drv-1", after: 3) }
        backend.setDown("the link dropped")
        await uplink.received(later[1])
        #expect(uplink.pushes.lastId == 3)
        #expect(uplink.pushes.pollDue(now: 1e9, socketOpen: true) == 3)
    }
}
