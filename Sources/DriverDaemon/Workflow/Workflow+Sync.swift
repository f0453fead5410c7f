import BackendClient
import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials
import JSONRPC

extension Workflow {
    /// Fetches the active tasks and merges them with what is queued locally (design brief §3.3): queued
    /// transitions are kept and replayed; where the backend went elsewhere, they become dead letters and the
    /// task shows the backend's state, with a `task.conflict` event.
    func sync() async throws {
        guard let session else { return }
        syncRequested = false
        let active = try await session.authorized { client, token in try await client.activeTasks(token: token) }
        try merge(active)
    }

    func merge(_ active: ActiveTasks) throws {
        let now = now()
        var upserts: [LocalTask] = []
        var conflicts: [TaskConflictEvent] = []
        var deadLetters: [Int64: String] = [:]
        // What is queued, read once: the merge below is rules only.
        let queued = try outbox.pendingItemsByTask()
        for remote in active.tasks {
            // A task new here may still have changes queued (kept through a logout): they are merged like any other's.
            let known = tasks[remote.id]
            var local = try known ?? LocalTask(backend: remote, now: now)
            let items = (queued[remote.id] ?? []).filter { Self.taskChangeKinds.contains($0.kind) }
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
                for id in dead { deadLetters[id] = "conflict: \(reason)" }
                conflicts.append(TaskConflictEvent(taskId: remote.id, localStatus: localStatus, backendStatus: backendStatus, reason: reason))
            }
            // The backend never takes a proof back; a list that does not show it yet is older than the answer.
            if remote.podAccepted {
                local.pod = .accepted
            } else if known == nil, let proof = items.last(where: { $0.kind.category == .proof }) {
                local.pod = proof.kind == .podOTP ? .unverified : .captured
            }
            if known == nil || local != before {
                if local != before { local.updatedAt = now }
                upserts.append(local)
            }
        }
        // Tasks the backend no longer lists (finished, cancelled, moved to another driver) leave the route
        // unless something of theirs is still queued.
        let listed = Set(active.tasks.map(\.id))
        var removals: [String] = []
        var gone: [LocalTask] = []
        for task in tasks.values where !listed.contains(task.id) {
            guard queued[task.id]?.isEmpty ?? true else { continue }
            removals.append(task.id)
            if !task.status.isTerminal { gone.append(task) }
        }
        let keepLocalOrder = !(queued[TaskRecord.routeLane]?.isEmpty ?? true)
        try book.applySync(
            upserts: upserts.map(\.record), removals: removals, sequence: keepLocalOrder ? nil : active.sequence,
            deadLetters: deadLetters, now: now)
        for task in upserts { tasks[task.id] = task }
        for id in removals { tasks[id] = nil }
        if !keepLocalOrder { sequence = active.sequence }
        syncedAt = now
        for event in conflicts {
            logger.warning(
                "task \(event.taskId): \(event.reason)",
                metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.taskConflict.rawValue)", "task_id": "\(event.taskId)"])
            hub.publish(Events.taskConflict, event)
        }
        for task in upserts { publish(task) }
        for var task in gone {
            // Gone from the backend's list while open here: cancelled (or given to another driver).
            task.status = .cancelled
            publish(task)
        }
        if !upserts.isEmpty || !removals.isEmpty || !keepLocalOrder { publishRoute() }
    }

    /// Asks the service loop for a sync (a push, the link coming back).
    func requestSync() {
        syncRequested = true
        syncNeeded.signal()
    }

    /// Refreshes the backend's ETA of the next stop while the driver is on the way to it.
    func refreshServerETA() async {
        guard let session, session.isOnline, let first = nextStopId(), let (task, stop) = stop(first),
              RouteRules.stopStatus(stop.kind, task: task.status, isNext: true) == .enRoute
        else { return }
        do {
            storeServerETA(try await session.authorized { client, token in try await client.eta(taskId: task.id, token: token) })
        } catch {
            // Best effort, asked again within the minute; the card keeps the last ETA meanwhile.
            logger.debug("no ETA from the backend for \(task.id): \(error)")
        }
    }

    /// A push about tasks: the route is fetched again; an ETA is kept for the card.
    func pushReceived(_ push: Push) async {
        switch push.kind {
        case .taskAssigned, .routeChanged, .taskCancelled: requestSync()
        case .eta:
            if let taskId = push.taskId, let seconds = push.etaSeconds, let stopId = nextStopId(), Stop.parse(stopId)?.taskId == taskId {
                storeServerETA(ETAResponse(
                    taskId: taskId, stopId: stopId, etaSeconds: seconds, distanceMeters: nil, positionTimestamp: nil, computedAt: push.sentAt))
            }
        case .customerMessage, .configUpdate, .updateAvailable, .fleetRequest: break  // not subscribed
        }
    }
}
