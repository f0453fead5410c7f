import DriverAPI

/// What a queued item counts as: each outbox kind names one, and the outcome policy decides by it.
public enum OutboxCategory: Sendable, Equatable, CaseIterable {
    /// A task's status change.
    case transition
    /// A proof of delivery (a code or a photo).
    case proof
    /// The driver's stop order.
    case routeChange
    /// A record of where and how the vehicle went (a visit, a trip, idling, harsh driving), or the unit's
    /// answer to the fleet: never changes a task, refused alone.
    case activity
    /// A driver's SOS: never a dead letter (a refusal is retried like a lost request).
    case alert
}

/// What becomes of a queued item once the backend answered its attempt, decided without I/O. The uplink
/// performs the decision; the item's owner hears it.
public enum OutboxOutcomePolicy {
    /// The backend's answer to one attempt.
    public enum Answer: Sendable, Equatable {
        /// 2xx; a transition's answer names the status the backend applied.
        case accepted(applied: TaskStatus?)
        /// A refusal for good (409, 422, other 4xx), with the task's status as the backend's answer shows it.
        case refused(backendStatus: TaskStatus?)
        /// No answer, a 5xx, or a 401: the link's business, not the item's.
        case notDelivered
    }

    public enum Decision: Sendable, Equatable {
        /// The backend has it: the owner hears the applied status, then the item leaves the queue.
        case acknowledge(applied: TaskStatus?)
        /// Kept as a dead letter with the backend's answer, never sent again; the owner and the front ends hear it.
        case deadLetter
        /// Kept as it is and sent again after the link's backoff.
        case retry
        /// Kept and sent again, loudly: someone may be in danger, so a refusal does not end it.
        case retryRefused
    }

    /// `target`: the status a transition moves its task to (nil for other items).
    public static func decide(_ answer: Answer, category: OutboxCategory, target: TaskStatus?) -> Decision {
        switch answer {
        case .accepted(let applied):
            return .acknowledge(applied: applied)
        case .notDelivered:
            return .retry
        case .refused(let backendStatus):
            switch category {
            case .alert:
                return .retryRefused
            case .transition:
                // The unit's own change coming back (a power cut lost its record of sending it): the backend already
                // holds it, or something past it.
                if let target, let backendStatus, TaskSync.alreadyApplied(target: target, backend: backendStatus) {
                    return .acknowledge(applied: backendStatus)
                }
                return .deadLetter
            case .proof, .routeChange, .activity:
                return .deadLetter
            }
        }
    }
}
