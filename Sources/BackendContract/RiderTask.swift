import DriverAPI
import DriverDomain

/// How a delivery is proved: a photo of the handover or the customer's 4-digit code.
public enum PODType: String, Codable, Sendable, Equatable, CaseIterable {
    case photo = "PHOTO", otp = "OTP"
}

/// One place to visit: the vendor (pickup) or the customer (drop-off) of a task.
public struct Stop: Codable, Sendable, Equatable {
    /// `<taskId>-pickup` or `<taskId>-dropoff`.
    public var id: String
    public var kind: StopKind
    public var address: String
    public var lat: Double
    public var lng: Double
    /// The vendor's name at a pickup, the customer's at a drop-off.
    public var name: String
    public var phone: String
    /// The stop's geofence, metres (the unit's `arrival.radius` when absent; never below a fix's error).
    public var geofenceRadius: Double?

    public init(
        id: String, kind: StopKind, address: String, lat: Double, lng: Double, name: String, phone: String, geofenceRadius: Double? = nil
    ) {
        self.id = id
        self.kind = kind
        self.address = address
        self.lat = lat
        self.lng = lng
        self.name = name
        self.phone = phone
        self.geofenceRadius = geofenceRadius
    }

    public static func id(taskId: String, kind: StopKind) -> String { "\(taskId)-\(kind.rawValue)" }

    /// The task id and kind a stop id names, or nil when it names none.
    public static func parse(_ stopId: String) -> (taskId: String, kind: StopKind)? {
        // Split at the last dash (kinds have none): every view of a task looks for the next stop this way, so
        // no strings are built to compare.
        let utf8 = stopId.utf8
        guard let dash = utf8.lastIndex(of: UInt8(ascii: "-")), dash != utf8.startIndex,
              let kind = StopKind(rawValue: String(stopId[utf8.index(after: dash)...]))
        else { return nil }
        return (String(stopId[..<dash]), kind)
    }
}

/// A task (one order) as the backend shows it to its driver.
public struct RiderTask: Codable, Sendable, Equatable {
    public var id: String
    public var status: TaskStatus
    public var podType: PODType
    /// Whether the backend has accepted the task's proof of delivery.
    public var podAccepted: Bool
    /// Pickup first, then drop-off.
    public var stops: [Stop]
    /// The route from pickup to drop-off, Google encoded polyline (precision 5).
    public var polyline: String
    /// Set once the task is `DELIVERY_FAILED`.
    public var failureReason: FailureReason?
    /// Unix seconds of the last change on the backend.
    public var updatedAt: Double

    public init(
        id: String, status: TaskStatus, podType: PODType, podAccepted: Bool, stops: [Stop], polyline: String,
        failureReason: FailureReason? = nil, updatedAt: Double
    ) {
        self.id = id
        self.status = status
        self.podType = podType
        self.podAccepted = podAccepted
        self.stops = stops
        self.polyline = polyline
        self.failureReason = failureReason
        self.updatedAt = updatedAt
    }
}

/// `GET /api/v1/rider/tasks/active`: the driver's active tasks and the order of their stops.
public struct ActiveTasks: Codable, Sendable, Equatable {
    public var driverId: String
    public var tasks: [RiderTask]
    /// Stop ids in visiting order (multi-order routes interleave tasks).
    public var sequence: [String]
    public var serverTime: Double

    public init(driverId: String, tasks: [RiderTask], sequence: [String], serverTime: Double) {
        self.driverId = driverId
        self.tasks = tasks
        self.sequence = sequence
        self.serverTime = serverTime
    }
}

/// `PUT /api/v1/rider/route`: the driver's new stop order (every active stop once, a pickup before its drop-off).
public struct RouteSequence: Codable, Sendable, Equatable {
    public var sequence: [String]
    public init(sequence: [String]) { self.sequence = sequence }
}
