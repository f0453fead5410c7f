import BackendContract
import DriverAPI
import DriverDomain
import DriverStore

/// The backend's active tasks merged with the tasks the unit holds and what it has queued (design brief §3.3): queued
/// transitions are kept and replayed; where the backend went elsewhere they become dead letters and the task shows
/// the backend's state, as a conflict. Rules only: the workflow stores the plan, then tells front ends.
enum RouteMerge {
    struct Plan {
        /// Tasks new here or changed, as they are to be stored.
        var upserts: [LocalTask] = []
        /// Tasks the backend no longer lists and nothing of theirs is queued: they leave the route.
        var removals: [String] = []
        /// Of those, the ones open here (cancelled, or given to another driver): front ends hear them cancelled.
        var gone: [LocalTask] = []
        var conflicts: [TaskConflictEvent] = []
        /// Queued items the backend's state makes impossible, with why.
        var deadLetters: [Int64: String] = [:]
        /// The backend's stop order, nil while a new local order waits in the queue (it goes first).
        var sequence: [String]?

        /// Whether the route as front ends see it changed.
        var routeChanged: Bool { !upserts.isEmpty || !removals.isEmpty || sequence != nil }
    }

    /// `queued`: the outbox's pending items by task (the route's lane under `TaskRecord.routeLane`).
    static func plan(_ active: ActiveTasks, tasks: [String: LocalTask], queued: [String: [OutboxItemRecord]], now: Double) throws -> Plan {
        var plan = Plan()
        for remote in active.tasks {
            // A task new here may still have changes queued (kept through a logout): they are merged like any other's.
            let known = tasks[remote.id]
            var local = try known ?? LocalTask(backend: remote, now: now)
            let items = (queued[remote.id] ?? []).filter { Workflow.taskChangeKinds.contains($0.kind) }
            // Queued transitions are what the merge replays; a queued proof moves no status (its verdict comes
            // with its answer), and the stop order has a lane of its own.
            let pending = items.compactMap { item in item.id.flatMap { id in item.transitionStatus.map { TaskSync.Pending(itemId: id, to: $0) } } }
            let before = local
            try local.setDetail(remote)
            switch TaskSync.merge(backend: remote.status, confirmed: local.backendStatus, pending: pending) {
            case .backend(let status):
                local.status = status
                local.backendStatus = status
                local.failureReason = remote.failureReason
                local.sync = items.isEmpty ? .synced : .pending
            case .keepLocal(let status):
                local.status = status
                if TaskWorkflow.precedes(local.backendStatus, remote.status) { local.backendStatus = remote.status }
            case .conflict(let localStatus, let backendStatus, let dead):
                local.status = backendStatus
                local.backendStatus = backendStatus
                local.failureReason = remote.failureReason
                local.sync = .rejected
                let reason = "the backend has the task as \(backendStatus.rawValue); the local \(localStatus.rawValue) cannot follow"
                for id in dead { plan.deadLetters[id] = "conflict: \(reason)" }
                plan.conflicts.append(TaskConflictEvent(taskId: remote.id, localStatus: localStatus, backendStatus: backendStatus, reason: reason))
            }
            // The backend never takes a proof back; a list that does not show it yet is older than the answer.
            if remote.podAccepted {
                local.pod = .accepted
            } else if known == nil, let proof = items.last(where: { $0.kind.category == .proof }) {
                local.pod = proof.kind == .podOTP ? .unverified : .captured
            }
            if known == nil || local != before {
                if local != before { local.updatedAt = now }
                plan.upserts.append(local)
            }
        }
        // Tasks the backend no longer lists (finished, cancelled, moved to another driver) leave the route
        // unless something of theirs is still queued.
        let listed = Set(active.tasks.map(\.id))
        for task in tasks.values.sorted(by: { $0.id < $1.id }) where !listed.contains(task.id) {
            guard queued[task.id]?.isEmpty ?? true else { continue }
            plan.removals.append(task.id)
            if !task.status.isTerminal {
                var cancelled = task
                cancelled.status = .cancelled
                plan.gone.append(cancelled)
            }
        }
        let keepLocalOrder = !(queued[TaskRecord.routeLane]?.isEmpty ?? true)
        plan.sequence = keepLocalOrder ? nil : active.sequence
        return plan
    }
}
