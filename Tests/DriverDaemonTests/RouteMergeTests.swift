import BackendContract
import DriverAPI
@testable import DriverDaemon
import DriverDomain
import DriverStore
import Foundation
import Testing

/// The sync's merge as rules: the backend's list, the tasks held and the queue in, the plan out (no store, no actor).
@Suite("Route merge")
struct RouteMergeTests {
    static func remote(_ id: String, _ status: TaskStatus, podAccepted: Bool = false) -> RiderTask {
        RiderTask(
            id: id, status: status, podType: .otp, podAccepted: podAccepted,
            stops: [
                Stop(id: Stop.id(taskId: id, kind: .pickup), kind: .pickup, address: "A", lat: 49, lng: 12, name: "V", phone: "1"),
                Stop(id: Stop.id(taskId: id, kind: .dropoff), kind: .dropoff, address: "B", lat: 49.01, lng: 12.01, name: "C", phone: "2"),
            ],
            polyline: "", updatedAt: 100)
    }

    static func held(_ id: String, _ status: TaskStatus, backend: TaskStatus? = nil) throws -> LocalTask {
        var task = try LocalTask(backend: remote(id, backend ?? status), now: 100)
        task.status = status
        return task
    }

    /// A queued transition of `taskId` to `status`, as the outbox holds it.
    static func queued(_ id: Int64, _ taskId: String, to status: TaskStatus) -> OutboxItemRecord {
        var item = OutboxItemRecord(
            kind: .status, taskId: taskId, idempotencyKey: "key-\(id)", payload: Data(#"{"status":"\#(status.rawValue)"}"#.utf8), createdAt: 100)
        item.id = id
        return item
    }

    static func active(_ tasks: [RiderTask], sequence: [String] = ["t1-pickup"]) -> ActiveTasks {
        ActiveTasks(driverId: "rider1", tasks: tasks, sequence: sequence, serverTime: 200)
    }

    @Test("a transition queued ahead of the backend is kept and replayed: the local status stays, the backend's is noted, nothing is dead")
    func queuedAheadIsKept() throws {
        let plan = try RouteMerge.plan(
            Self.active([Self.remote("t1", .accepted)]), tasks: ["t1": try Self.held("t1", .pickedUp, backend: .accepted)],
            queued: ["t1": [Self.queued(7, "t1", to: .arrivedAtStore), Self.queued(8, "t1", to: .pickedUp)]], now: 300)
        #expect(plan.conflicts.isEmpty && plan.deadLetters.isEmpty && plan.removals.isEmpty)
        #expect(plan.upserts.isEmpty, "the task as held (PICKED_UP, the backend at ACCEPTED) is what the merge keeps: nothing to store")
        let behind = try RouteMerge.plan(
            Self.active([Self.remote("t1", .arrivedAtStore)]), tasks: ["t1": try Self.held("t1", .pickedUp, backend: .accepted)],
            queued: ["t1": [Self.queued(8, "t1", to: .pickedUp)]], now: 300)
        let task = try #require(behind.upserts.first, "the backend moved on to a status the queue passed through: noted")
        #expect(task.status == .pickedUp && task.backendStatus == .arrivedAtStore && behind.deadLetters.isEmpty)
        #expect(plan.sequence == ["t1-pickup"], "no new order queued: the backend's is taken")
    }

    @Test("the backend went elsewhere (cancelled while a transition is queued): a conflict, the item dead with its reason, the task as the backend has it")
    func cancelledIsAConflict() throws {
        let plan = try RouteMerge.plan(
            Self.active([Self.remote("t1", .cancelled)]), tasks: ["t1": try Self.held("t1", .arrivedAtStore, backend: .accepted)],
            queued: ["t1": [Self.queued(9, "t1", to: .arrivedAtStore)]], now: 300)
        let conflict = try #require(plan.conflicts.first)
        #expect(conflict.taskId == "t1" && conflict.localStatus == .arrivedAtStore && conflict.backendStatus == .cancelled)
        #expect(plan.deadLetters[9]?.hasPrefix("conflict: the backend has the task as CANCELLED") == true, "\(plan.deadLetters)")
        let task = try #require(plan.upserts.first)
        #expect(task.status == .cancelled && task.sync == .rejected && task.updatedAt == 300)
    }

    @Test("a task the backend no longer lists leaves the route (front ends hear it cancelled when it was open), unless something of it is queued")
    func unlistedTasks() throws {
        let tasks = [
            "t1": try Self.held("t1", .accepted), "t2": try Self.held("t2", .pickedUp), "t3": try Self.held("t3", .delivered),
        ]
        let plan = try RouteMerge.plan(
            Self.active([Self.remote("t1", .accepted)]), tasks: tasks, queued: ["t2": [Self.queued(3, "t2", to: .arrivedAtDestination)]], now: 300)
        #expect(plan.removals == ["t3"], "t2 has a transition queued: it stays")
        #expect(plan.gone.isEmpty, "t3 was delivered: nothing to tell")
        let second = try RouteMerge.plan(Self.active([]), tasks: ["t1": try Self.held("t1", .accepted)], queued: [:], now: 300)
        #expect(second.removals == ["t1"] && second.gone.map(\.status) == [.cancelled])
        #expect(second.routeChanged)
    }

    @Test("a new stop order waiting in the queue keeps the local order; a new task with a proof queued shows it; an unchanged list changes nothing")
    func orderProofAndNoChange() throws {
        var proof = OutboxItemRecord(kind: .podOTP, taskId: "t4", idempotencyKey: "k", payload: Data("{}".utf8), createdAt: 100)
        proof.id = 11
        let route = OutboxItemRecord(kind: .route, taskId: TaskRecord.routeLane, idempotencyKey: "r", payload: Data("{}".utf8), createdAt: 100)
        let plan = try RouteMerge.plan(
            Self.active([Self.remote("t4", .pickedUp)]), tasks: [:], queued: ["t4": [proof], TaskRecord.routeLane: [route]], now: 300)
        #expect(plan.sequence == nil, "the local order goes first")
        #expect(plan.upserts.map(\.pod) == [.unverified], "a code queued before a logout shows as unverified")
        let held = try Self.held("t1", .accepted)
        let unchanged = try RouteMerge.plan(Self.active([Self.remote("t1", .accepted)]), tasks: ["t1": held], queued: [:], now: 300)
        #expect(unchanged.upserts.isEmpty && unchanged.removals.isEmpty && unchanged.conflicts.isEmpty)
    }
}
