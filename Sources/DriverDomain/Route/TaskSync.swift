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
        /// The backend is along the queued chain, or behind what this daemon already knows (an answer it
        /// got after the backend's list was read): the local status stays and the queue is replayed.
        case keepLocal(TaskStatus)
        /// The backend moved elsewhere (a cancellation, another device): take its status, dead-letter the
        /// queued items.
        case conflict(local: TaskStatus, backend: TaskStatus, deadItems: [Int64])
    }

    /// - Parameters:
    ///   - backend: the status the backend reports.
    ///   - confirmed: the last status the backend confirmed to this daemon (the queue starts from it).
    ///   - pending: the queued transitions, oldest first.
    public static func merge(backend: TaskStatus, confirmed: TaskStatus, pending: [Pending]) -> Outcome {
        guard let target = pending.last?.to else {
            // A list read before the latest answer shows an older status: keep what the answer said.
            return TaskWorkflow.precedes(backend, confirmed) ? .keepLocal(confirmed) : .backend(backend)
        }
        // Statuses only move forward: a backend behind the queue's target has not had all of it yet (or its
        // list was read before the latest answers, or an ack was not recorded); the queue is replayed.
        if backend == target || TaskWorkflow.precedes(backend, target) { return .keepLocal(target) }
        return .conflict(local: target, backend: backend, deadItems: pending.map(\.itemId))
    }
}
