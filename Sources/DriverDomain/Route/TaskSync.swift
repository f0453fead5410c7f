import DriverAPI

/// Merges the backend's view of a task with the local transitions it has not acked yet (design brief §3.3:
/// unsynced transitions are replayed, never lost; a conflict becomes an event and dead letters), pure.
public enum TaskSync {
    /// A queued status transition of the task, oldest first.
    public struct Pending: Sendable, Equatable {
        public var itemId: Int64
        public var to: TaskStatus
        public init(itemId: Int64, to: TaskStatus) {
            self.itemId = itemId
            self.to = to
        }
    }

    public enum Outcome: Sendable, Equatable {
        /// Nothing queued: the backend's status is the task's status.
        case backend(TaskStatus)
        /// The backend is somewhere along the queued chain: keep the local status, the rest is replayed.
        case keepLocal(TaskStatus)
        /// The backend moved elsewhere (a cancellation, another device): take its status, dead-letter the
        /// queued items.
        case conflict(local: TaskStatus, backend: TaskStatus, deadItems: [Int64])
    }

    /// - Parameters:
    ///   - backend: the status the backend reports.
    ///   - base: the status the first queued transition started from.
    ///   - pending: the queued transitions, oldest first.
    public static func merge(backend: TaskStatus, base: TaskStatus, pending: [Pending]) -> Outcome {
        guard let last = pending.last else { return .backend(backend) }
        let chain = [base] + pending.map(\.to)
        if chain.contains(backend) { return .keepLocal(last.to) }
        // The backend may be ahead of `base` when an ack was not recorded (a crash between the two): the queue
        // still fits if one of its transitions follows from the backend's status.
        if pending.contains(where: { TaskWorkflow.isTransition(from: backend, to: $0.to) }) { return .keepLocal(last.to) }
        return .conflict(local: last.to, backend: backend, deadItems: pending.map(\.itemId))
    }
}
