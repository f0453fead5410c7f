import BackendContract
import DriverDomain

extension SimWorld {
    /// Statuses a driver may set; `CANCELLED` and `ASSIGNED` belong to the dispatcher.
    static let driverStatuses: Set<TaskStatus> = Set(TaskStatus.allCases).subtracting([.assigned, .cancelled])

    /// A status update under an idempotency key. `bodyDigest` identifies the request (task id and body), so a
    /// replay is told apart from a reuse of the key. `replayed` is true when the answer is the first one again.
    public mutating func updateStatus(
        taskId: String, driverId: String, request: StatusUpdateRequest, idempotencyKey: String, bodyDigest: String, now: Double
    ) -> (outcome: StatusOutcome, replayed: Bool) {
        switch statusLedger.check(key: idempotencyKey, bodyDigest: bodyDigest) {
        case .replay(let first):
            stats.duplicateRequests += 1
            return (first, true)
        case .conflict:
            return (.keyReused, false)
        case .new:
            break
        }
        guard var record = record(taskId: taskId, driverId: driverId) else { return (.notFound, false) }
        let current = record.task.status
        let outcome: StatusOutcome
        if !Self.driverStatuses.contains(request.status) || !TaskWorkflow.isTransition(from: current, to: request.status) {
            outcome = .invalidTransition(riderTask(record))
        } else if request.status == .delivered && !record.podAccepted {
            outcome = .podRequired(riderTask(record))
        } else {
            record.task.status = request.status
            record.updatedAt = now
            if request.status == .deliveryFailed { record.failureReason = request.reason }
            tasks[taskId] = record
            stats.statusUpdates.append(.init(taskId: taskId, status: request.status, idempotencyKey: idempotencyKey, time: now))
            outcome = .applied(StatusAccepted(
                taskId: taskId, status: request.status, previousStatus: current, idempotencyKey: idempotencyKey, acceptedAt: now))
        }
        if case .applied = outcome {} else { stats.refusedStatusUpdates += 1 }
        statusLedger.record(key: idempotencyKey, bodyDigest: bodyDigest, response: outcome)
        return (outcome, false)
    }
}
