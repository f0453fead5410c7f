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
