import BackendClient
import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials
import JSONRPC

extension Workflow {
    /// Fetches the active tasks and merges them with what is queued locally (`RouteMerge`), with a `task.conflict`
    /// event for each task where the backend went elsewhere.
    func sync() async throws {
        guard let session else { return }
        syncRequested = false
        let active = try await session.authorized { client, token in try await client.activeTasks(token: token) }
        try merge(active)
    }

    func merge(_ active: ActiveTasks) throws {
        let now = now()
        // What is queued, read once: the plan is rules only.
        let plan = try RouteMerge.plan(active, tasks: tasks, queued: try outbox.pendingItemsByTask(), now: now)
        try book.applySync(
            upserts: plan.upserts.map(\.record), removals: plan.removals, sequence: plan.sequence, deadLetters: plan.deadLetters, now: now)
        for task in plan.upserts { tasks[task.id] = task }
        for id in plan.removals { tasks[id] = nil }
        if let sequence = plan.sequence { self.sequence = sequence }
        syncedAt = now
        for event in plan.conflicts {
            logger.warning(
                "task \(event.taskId): \(event.reason)",
                metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.taskConflict.rawValue)", "task_id": "\(event.taskId)"])
            hub.publish(Events.taskConflict, event)
        }
        for task in plan.upserts + plan.gone { publish(task) }
        if plan.routeChanged { publishRoute() }
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
