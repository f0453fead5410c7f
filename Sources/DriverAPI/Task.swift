/// A task's status, with the wire names of the backend contract.
public enum TaskStatus: String, Sendable, Codable, CaseIterable, Equatable {
    case assigned = "ASSIGNED"
    case accepted = "ACCEPTED"
    case arrivedAtStore = "ARRIVED_AT_STORE"
    case pickedUp = "PICKED_UP"
    case arrivedAtDestination = "ARRIVED_AT_DESTINATION"
    case delivered = "DELIVERED"
    case deliveryFailed = "DELIVERY_FAILED"
    case returnedToVendor = "RETURNED_TO_VENDOR"
    /// Set by the backend (a dispatcher), never by a driver action.
    case cancelled = "CANCELLED"

    /// Nothing follows a terminal status.
    public var isTerminal: Bool { self == .delivered || self == .returnedToVendor || self == .cancelled }
}

/// Why a delivery failed (wire names of the backend contract).
public enum FailureReason: String, Sendable, Codable, CaseIterable, Equatable {
    case customerUnavailable = "CUSTOMER_UNAVAILABLE"
    case addressNotFound = "ADDRESS_NOT_FOUND"
    case refused = "REFUSED"
    case unsafe = "UNSAFE"
    case other = "OTHER"
}

/// What a driver can do to a task.
public enum DriverAction: String, Sendable, Codable, CaseIterable, Equatable {
    case accept, arrive, pickup, deliver, fail, returnToVendor
}

/// The one button a front end shows for a task.
public enum PrimaryAction: String, Sendable, Codable, Equatable {
    case accept = "Accept"
    case arrivedAtStore = "Arrived"
    case pickedUp = "Picked up"
    case arrivedAtDestination = "Arrived at destination"
    case capturePOD = "Capture POD"
    case delivered = "Delivered"
    case returnToVendor = "Return to vendor"
}

/// Which end of a task a stop is: the vendor's (pickup) or the customer's (drop-off).
public enum StopKind: String, Codable, Sendable, Equatable, CaseIterable {
    case pickup, dropoff
}

/// A stop's status for a front end, derived from its task's status.
public enum StopStatus: String, Codable, Sendable, Equatable, CaseIterable {
    case pending
    case enRoute = "en-route"
    case arrived
    case pickedUp = "picked-up"
    case delivered
    case failed
}

/// Whether the backend has a task's latest local change.
public enum SyncState: String, Codable, Sendable, Equatable, CaseIterable {
    /// Committed locally, waiting in the outbox.
    case pending
    /// The backend has acked every change of the task.
    case synced
    /// The backend refused a change: the task shows the backend's state, the refused item is a dead letter.
    case rejected
}

/// Where a task's proof of delivery stands.
public enum PODState: String, Codable, Sendable, Equatable, CaseIterable {
    case none
    /// Captured and queued (a photo waiting to upload).
    case captured
    /// An OTP queued offline: the backend's verdict comes later as a `pod.verdict` event.
    case unverified
    /// The backend accepted it.
    case accepted
    /// The backend refused it (a wrong OTP found out later): capture it again.
    case rejected

    /// Whether `DELIVERED` may be queued.
    public var allowsDelivery: Bool { self == .captured || self == .unverified || self == .accepted }
}

/// A task as the daemon holds it: the local (optimistic) status and whether the backend has it yet.
public struct TaskView: Codable, Sendable, Equatable {
    public var id: String
    /// The local status: a driver action changes it at once, before the backend has it.
    public var status: TaskStatus
    /// The last status the backend confirmed.
    public var backendStatus: TaskStatus
    public var sync: SyncState
    /// `PHOTO` or `OTP`.
    public var podType: String
    public var pod: PODState
    public var failureReason: FailureReason?
    /// What the driver can do now, and the one button a UI shows (nil when nothing is left).
    public var allowedActions: [DriverAction]
    public var primaryAction: PrimaryAction?
    /// Pickup first, then drop-off.
    public var stops: [StopView]
    /// Unix seconds of the last change, local or from the backend.
    public var updatedAt: Double
    /// Odometer distance since the task was accepted, to its end once it ended (API 1.7).
    public var distanceMeters: Double?
    /// The same by the vehicle's own odometer, when its OBD-II adapter reads one (API 1.11).
    public var vehicleDistanceMeters: Double?

    public init(
        id: String, status: TaskStatus, backendStatus: TaskStatus, sync: SyncState, podType: String, pod: PODState,
        failureReason: FailureReason?, allowedActions: [DriverAction], primaryAction: PrimaryAction?, stops: [StopView],
        updatedAt: Double, distanceMeters: Double? = nil
    ) {
        self.distanceMeters = distanceMeters
        self.id = id
        self.status = status
        self.backendStatus = backendStatus
        self.sync = sync
        self.podType = podType
        self.pod = pod
        self.failureReason = failureReason
        self.allowedActions = allowedActions
        self.primaryAction = primaryAction
        self.stops = stops
        self.updatedAt = updatedAt
    }
}

/// Params of `task.accept`, `task.arrive`, `task.pickup`, `task.deliver` and `task.returnToVendor`.
/// Without `taskId`, the task of the next stop.
public struct TaskParams: Codable, Sendable, Equatable {
    public var taskId: String?
    /// `task.deliver` farther from the stop than its geofence's exit border (with a fresh fix) needs one.
    public var outsideReason: OutsideReason?
    public init(taskId: String? = nil, outsideReason: OutsideReason? = nil) {
        self.taskId = taskId
        self.outsideReason = outsideReason
    }
}

/// Params of `task.fail`.
public struct FailParams: Codable, Sendable, Equatable {
    public var taskId: String?
    public var reason: FailureReason
    /// Free text for the dispatcher, at most 500 characters.
    public var note: String?
    /// Needed farther from the stop than its geofence's exit border (with a fresh fix).
    public var outsideReason: OutsideReason?
    public init(taskId: String? = nil, reason: FailureReason, note: String? = nil, outsideReason: OutsideReason? = nil) {
        self.taskId = taskId
        self.reason = reason
        self.note = note
        self.outsideReason = outsideReason
    }
}

/// Params of the `task.conflict` event: the backend's state and the local one disagreed; the local changes
/// the backend cannot take are dead letters, and the task now shows the backend's state.
public struct TaskConflictEvent: Codable, Sendable, Equatable {
    public var taskId: String
    public var localStatus: TaskStatus
    public var backendStatus: TaskStatus
    public var reason: String
    public init(taskId: String, localStatus: TaskStatus, backendStatus: TaskStatus, reason: String) {
        self.taskId = taskId
        self.localStatus = localStatus
        self.backendStatus = backendStatus
        self.reason = reason
    }
}

// MARK: Methods

extension Methods {
    /// driverctl: `driverctl accept [--task ID]`.
    ///
    /// **Mutating.** Params: `{"taskId": "task-1001"}`, or none for the task of the next stop. This and the other
    /// driver actions (`task.arrive`, `task.pickup`, `task.deliver`, `task.fail`, `task.returnToVendor`) each validate
    /// the action against the task's state (`action refused` (1003) names the current status and the allowed actions),
    /// then commits the new status and an outbox item with a fresh idempotency key in one SQLite transaction with
    /// `synchronous=FULL`, and answers at once with the task (`sync: "pending"`); the uplink sends `PATCH
    /// /api/v1/rider/tasks/{id}/status` in order per task. The update carries the fix of that moment (when one is at
    /// most 60 s old). `task.arrive` means the store before the pickup and the destination after it.
    public static let taskAccept = Method<TaskParams, TaskView>("task.accept", mutating: true, screen: true)

    /// At the store or at the destination, from the task's state.
    ///
    /// driverctl: `driverctl arrive [--task ID]`.
    ///
    /// **Mutating.** As `task.accept`: arrived at the store (from `ACCEPTED`) or at the destination (from `PICKED_UP`).
    /// The arrival opens the stop's visit (see `visits.list`) when the geofence detected it or a fresh fix puts the
    /// vehicle within the exit border (a tap far away, or without a fix, opens none). With `arrival.mode = "auto"` the
    /// daemon performs it itself when the geofence detects the arrival (the transition goes to the backend with
    /// `"source": "geofence"`); with `"suggest"` (the default) an `arrival.suggested` event goes out and the next-stop
    /// card carries `arrivalDetected`.
    ///
    /// Geofences: each stop's radius comes from the backend (`geofenceRadius`, else `arrival.radius`, 100 m), never
    /// below the fix's error; the exit border is 1.5× wider. Arrived: inside and slower than 2 m/s for
    /// `arrival.dwell_seconds` (20), or parked inside. Left: beyond the exit border and driving (2 m/s) on two fixes
    /// in a row; parked scatter on the border never leaves.
    public static let taskArrive = Method<TaskParams, TaskView>("task.arrive", mutating: true, screen: true)

    /// driverctl: `driverctl pickup [--task ID]`.
    ///
    /// **Mutating.** As `task.accept`: picked up at the store (from `ARRIVED_AT_STORE`).
    public static let taskPickup = Method<TaskParams, TaskView>("task.pickup", mutating: true, screen: true)

    /// driverctl: `driverctl deliver [--task ID]`.
    ///
    /// **Mutating.** As `task.accept`, from `ARRIVED_AT_DESTINATION`; refused until the task's proof of delivery is
    /// captured (`pod.otp` or `pod.photo`). Farther from the drop-off than its exit border (with a fix at most 30 s
    /// old) it needs `"outsideReason"`: `CUSTOMER_MET_ELSEWHERE`, `ADDRESS_WRONG`, `GPS_POOR` or `OTHER`
    /// (`1007` otherwise, with the distance). The reason and the distance (`stopDistance`) travel with the transition;
    /// without a fix the delivery is allowed and sent with `"position": "unknown"`.
    public static let taskDeliver = Method<TaskParams, TaskView>("task.deliver", mutating: true, screen: true)

    /// driverctl: `driverctl fail REASON [--note TEXT] [--task ID]`.
    ///
    /// **Mutating.** Params: `{"taskId": "task-1001", "reason": "CUSTOMER_UNAVAILABLE", "note": "rang twice"}`; reasons
    /// `CUSTOMER_UNAVAILABLE`, `ADDRESS_NOT_FOUND`, `REFUSED`, `UNSAFE`, `OTHER`; the note has at most 500 characters.
    /// From `ARRIVED_AT_DESTINATION`; then `task.returnToVendor`. Away from the stop it needs `outsideReason`, as
    /// `task.deliver`. Result: the task, as above.
    public static let taskFail = Method<FailParams, TaskView>("task.fail", mutating: true, screen: true)

    /// driverctl: `driverctl return [--task ID]`.
    ///
    /// **Mutating.** As `task.accept`, from `DELIVERY_FAILED`: the goods went back to the vendor.
    public static let taskReturnToVendor = Method<TaskParams, TaskView>("task.returnToVendor", mutating: true, screen: true)

    /// This file's methods, in `Methods.all`.
    static let task: [MethodDescriptor] = [
        taskAccept.descriptor, taskArrive.descriptor, taskPickup.descriptor, taskDeliver.descriptor,
        taskFail.descriptor, taskReturnToVendor.descriptor,
    ]
}
