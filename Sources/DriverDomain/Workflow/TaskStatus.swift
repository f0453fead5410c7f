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
