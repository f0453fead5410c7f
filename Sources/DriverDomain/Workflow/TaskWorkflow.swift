import DriverAPI

/// The task state machine of the design brief, pure:
///
/// `ASSIGNED → ACCEPTED → ARRIVED_AT_STORE → PICKED_UP → ARRIVED_AT_DESTINATION → DELIVERED`,
/// `ARRIVED_AT_DESTINATION → DELIVERY_FAILED → RETURNED_TO_VENDOR`, and `CANCELLED` from the backend from
/// any status that is not terminal. Both ends use it: the daemon to refuse a driver action before it is
/// queued, the reference backend to answer an invalid transition with 409.
public enum TaskWorkflow {
    /// A refused action, worded for the driver, with what they can do instead.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public let current: TaskStatus
        public let action: DriverAction
        public let allowed: [DriverAction]
        public let reason: String

        public var description: String { reason }
    }

    /// The status a driver action leads to from `current`.
    /// - Parameter podCaptured: whether proof of delivery (photo or OTP) is captured; `deliver` needs it.
    public static func apply(_ action: DriverAction, to current: TaskStatus, podCaptured: Bool) -> Result<TaskStatus, Refusal> {
        let allowed = allowedActions(current, podCaptured: podCaptured)
        func refuse(_ reason: String) -> Result<TaskStatus, Refusal> {
            .failure(Refusal(current: current, action: action, allowed: allowed, reason: reason))
        }
        switch (current, action) {
        case (.assigned, .accept): return .success(.accepted)
        case (.accepted, .arrive): return .success(.arrivedAtStore)
        case (.arrivedAtStore, .pickup): return .success(.pickedUp)
        case (.pickedUp, .arrive): return .success(.arrivedAtDestination)
        case (.arrivedAtDestination, .deliver):
            return podCaptured ? .success(.delivered) : refuse("proof of delivery is required before delivering: capture a photo or the customer's code")
        case (.arrivedAtDestination, .fail): return .success(.deliveryFailed)
        case (.deliveryFailed, .returnToVendor): return .success(.returnedToVendor)
        default:
            let options = allowed.isEmpty ? "nothing (the task is \(current.rawValue))" : allowed.map(\.rawValue).joined(separator: ", ")
            return refuse("cannot \(action.rawValue) a task that is \(current.rawValue); allowed now: \(options)")
        }
    }

    /// The actions that `apply` would accept now.
    public static func allowedActions(_ current: TaskStatus, podCaptured: Bool) -> [DriverAction] {
        switch current {
        case .assigned: [.accept]
        case .accepted: [.arrive]
        case .arrivedAtStore: [.pickup]
        case .pickedUp: [.arrive]
        case .arrivedAtDestination: podCaptured ? [.deliver, .fail] : [.fail]
        case .deliveryFailed: [.returnToVendor]
        case .delivered, .returnedToVendor, .cancelled: []
        }
    }

    /// Whether `from → to` is a transition of the machine (for a backend validating status updates):
    /// a driver action's, or a cancellation.
    public static func isTransition(from: TaskStatus, to: TaskStatus) -> Bool {
        if to == .cancelled { return !from.isTerminal }
        return DriverAction.allCases.contains { action in
            // A refusal is the expected "not this action".
            (try? apply(action, to: from, podCaptured: true).get()) == to
        }
    }

    /// Whether driver actions lead from `a` to `b` (in one step or more). Statuses only move forward, so a
    /// backend status that precedes one the daemon already had confirmed is stale, not a change.
    public static func precedes(_ a: TaskStatus, _ b: TaskStatus) -> Bool {
        var frontier = [a], seen: Set<TaskStatus> = [a]
        while let current = frontier.popLast() {
            for next in TaskStatus.allCases where next != .cancelled && !seen.contains(next) && isTransition(from: current, to: next) {
                if next == b { return true }
                seen.insert(next)
                frontier.append(next)
            }
        }
        return false
    }

    /// The one button for a task, nil when nothing is left to do.
    public static func primaryAction(_ current: TaskStatus, podCaptured: Bool) -> PrimaryAction? {
        switch current {
        case .assigned: .accept
        case .accepted: .arrivedAtStore
        case .arrivedAtStore: .pickedUp
        case .pickedUp: .arrivedAtDestination
        case .arrivedAtDestination: podCaptured ? .delivered : .capturePOD
        case .deliveryFailed: .returnToVendor
        case .delivered, .returnedToVendor, .cancelled: nil
        }
    }
}
