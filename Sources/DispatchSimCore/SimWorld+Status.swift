import DriverAPI
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
        idempotent(\.statusLedger, key: idempotencyKey, digest: bodyDigest, keyReused: .keyReused, notFound: .notFound) {
            $0.applyStatus(taskId: taskId, driverId: driverId, request: request, idempotencyKey: idempotencyKey, now: now)
        }
    }

    private mutating func applyStatus(
        taskId: String, driverId: String, request: StatusUpdateRequest, idempotencyKey: String, now: Double
    ) -> StatusOutcome {
        guard var record = record(taskId: taskId, driverId: driverId) else { return .notFound }
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
            stats.statusUpdates.append(.init(
                taskId: taskId, status: request.status, idempotencyKey: idempotencyKey, time: now, timestamp: request.timestamp,
                timeSource: request.timeSource, source: request.source, stopDistance: request.stopDistance,
                outsideReason: request.outsideReason, position: request.position))
            outcome = .applied(StatusAccepted(
                taskId: taskId, status: request.status, previousStatus: current, idempotencyKey: idempotencyKey, acceptedAt: now))
        }
        if case .applied = outcome {} else { stats.refusedStatusUpdates += 1 }
        return outcome
    }
}

extension SimWorld {
    /// Runs `body` once per idempotency key (when there is one): a replay gets the first answer and changes
    /// nothing, a key reused with another request gets `keyReused`; every answer but `notFound` is remembered.
    mutating func idempotent<Outcome: Codable & Sendable & Equatable>(
        _ ledger: WritableKeyPath<SimWorld, IdempotencyLedger<Outcome>>, key: String?, digest: String,
        keyReused: Outcome, notFound: Outcome, _ body: (inout SimWorld) -> Outcome
    ) -> (outcome: Outcome, replayed: Bool) {
        if let key {
            switch self[keyPath: ledger].check(key: key, bodyDigest: digest) {
            case .replay(let first):
                stats.duplicateRequests += 1
                return (first, true)
            case .conflict:
                return (keyReused, false)
            case .new:
                break
            }
        }
        let outcome = body(&self)
        if let key, outcome != notFound { self[keyPath: ledger].record(key: key, bodyDigest: digest, response: outcome) }
        return (outcome, false)
    }
}
