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

    /// Whether a backend holding its task at `backend` has already applied a queued change to `target`: the same
    /// status, or one only reachable after it. A unit that lost its record of a change the backend took (a power cut
    /// between the send and the disk, a restored backup) sends it again under a new key and is refused; that
    /// refusal is its own change coming back, an acknowledgement, never a dead letter.
    public static func alreadyApplied(target: TaskStatus, backend: TaskStatus) -> Bool {
        backend == target || TaskWorkflow.precedes(target, backend)
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
        // A backend past the queue has had all of it (sent before a power cut took the unit's record of it): its
        // status stands, and the queued copies are acknowledged when the backend answers them.
        if alreadyApplied(target: target, backend: backend) { return .backend(backend) }
        return .conflict(local: target, backend: backend, deadItems: pending.map(\.itemId))
    }
}
