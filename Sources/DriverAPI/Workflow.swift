/// A stop as front ends show it.
public struct StopView: Codable, Sendable, Equatable {
    /// `<taskId>-pickup` or `<taskId>-dropoff`.
    public var id: String
    public var taskId: String
    public var kind: StopKind
    public var status: StopStatus
    public var address: String
    /// The vendor's name at a pickup, the customer's at a drop-off.
    public var name: String
    public var phone: String
    public var lat: Double
    public var lng: Double

    public init(
        id: String, taskId: String, kind: StopKind, status: StopStatus, address: String, name: String, phone: String,
        lat: Double, lng: Double
    ) {
        self.id = id
        self.taskId = taskId
        self.kind = kind
        self.status = status
        self.address = address
        self.name = name
        self.phone = phone
        self.lat = lat
        self.lng = lng
    }
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

/// Params of `pod.photo`: a JPEG or PNG file the daemon can read; it is copied into the daemon's spool.
public struct PhotoParams: Codable, Sendable, Equatable {
    public var taskId: String?
    public var path: String
    public init(taskId: String? = nil, path: String) {
        self.taskId = taskId
        self.path = path
    }
}

/// Params of `pod.otp`: the customer's 4-digit code.
public struct OTPParams: Codable, Sendable, Equatable {
    public var taskId: String?
    public var otp: String
    public init(taskId: String? = nil, otp: String) {
        self.taskId = taskId
        self.otp = otp
    }
}

/// Result of `pod.photo` and `pod.otp`.
public struct PODResult: Codable, Sendable, Equatable {
    public var task: TaskView
    /// For a photo: the spooled copy's SHA-256 (lowercase hex) and size.
    public var sha256: String?
    public var bytes: Int?
    public init(task: TaskView, sha256: String? = nil, bytes: Int? = nil) {
        self.task = task
        self.sha256 = sha256
        self.bytes = bytes
    }
}

/// An ETA and where it comes from.
public struct ETAView: Codable, Sendable, Equatable {
    public var seconds: Double
    public var distanceMeters: Double?
    /// `server` (the backend's, refreshed every 30 s while en route) or `local` (remaining distance over
    /// recent speed).
    public var source: String
    /// Unix seconds of the estimate.
    public var computedAt: Double
    public init(seconds: Double, distanceMeters: Double?, source: String, computedAt: Double) {
        self.seconds = seconds
        self.distanceMeters = distanceMeters
        self.source = source
        self.computedAt = computedAt
    }
}

/// Links that hand navigation to an app (the daemon never navigates itself).
public struct NavigationLinks: Codable, Sendable, Equatable {
    /// `google.navigation:q=lat,lng` (Android intent).
    public var google: String
    /// `https://www.google.com/maps/dir/?api=1&destination=lat,lng`.
    public var googleWeb: String
    /// `maps://?daddr=lat,lng`.
    public var apple: String
    /// `waze://?ll=lat,lng&navigate=yes`.
    public var waze: String
    /// RFC 5870: `geo:lat,lng`.
    public var geo: String
    public init(google: String, googleWeb: String, apple: String, waze: String, geo: String) {
        self.google = google
        self.googleWeb = googleWeb
        self.apple = apple
        self.waze = waze
        self.geo = geo
    }
}

/// The next-stop card: everything a UI shows for the next place to go.
public struct NextStopCard: Codable, Sendable, Equatable {
    public var stop: StopView
    public var task: TaskView
    public var eta: ETAView?
    /// The one button a UI shows for this stop.
    public var primaryAction: PrimaryAction?
    public var navigation: NavigationLinks
    /// Straight-line metres from the last fix to the stop; nil without a recent fix.
    public var distanceMeters: Double?
    /// Set when the geofence detected the arrival here and the task still waits for it (`suggest`): the
    /// primary action is the arrival the driver is asked to confirm.
    public var arrivalDetected: ArrivalDetected?
    public init(
        stop: StopView, task: TaskView, eta: ETAView?, primaryAction: PrimaryAction?, navigation: NavigationLinks,
        distanceMeters: Double? = nil, arrivalDetected: ArrivalDetected? = nil
    ) {
        self.stop = stop
        self.task = task
        self.eta = eta
        self.primaryAction = primaryAction
        self.navigation = navigation
        self.distanceMeters = distanceMeters
        self.arrivalDetected = arrivalDetected
    }
}

/// Result of `route.next`: the card, or nil when no stop is left.
public struct RouteNext: Codable, Sendable, Equatable {
    public var next: NextStopCard?
    /// Stops still to visit, the next one included.
    public var remainingStops: Int
    public init(next: NextStopCard?, remainingStops: Int) {
        self.next = next
        self.remainingStops = remainingStops
    }
}

/// Result of `route.get`: the active tasks and the stops still to visit, in order.
public struct RouteView: Codable, Sendable, Equatable {
    public var stops: [StopView]
    public var tasks: [TaskView]
    /// Unix seconds of the last sync with the backend; nil before the first.
    public var syncedAt: Double?
    public init(stops: [StopView], tasks: [TaskView], syncedAt: Double?) {
        self.stops = stops
        self.tasks = tasks
        self.syncedAt = syncedAt
    }
}

/// Params of `nav.links`: a stop id, or the next stop.
public struct NavParams: Codable, Sendable, Equatable {
    public var stopId: String?
    public init(stopId: String? = nil) { self.stopId = stopId }
}

/// Result of `nav.links`.
public struct NavResult: Codable, Sendable, Equatable {
    public var stop: StopView
    public var links: NavigationLinks
    public init(stop: StopView, links: NavigationLinks) {
        self.stop = stop
        self.links = links
    }
}

/// Params of `route.resequence`: every stop still to visit, once, each pickup before its drop-off.
public struct ResequenceParams: Codable, Sendable, Equatable {
    public var order: [String]
    /// Without it the call only previews the order and its ETAs.
    public var confirm: Bool
    public init(order: [String], confirm: Bool = false) {
        self.order = order
        self.confirm = confirm
    }
}

/// Result of `route.resequence`.
public struct ResequenceResult: Codable, Sendable, Equatable {
    public struct StopETA: Codable, Sendable, Equatable {
        public var stopId: String
        /// Local estimate from the current position, stop after stop.
        public var etaSeconds: Double
        public init(stopId: String, etaSeconds: Double) {
            self.stopId = stopId
            self.etaSeconds = etaSeconds
        }
    }

    public var order: [StopETA]
    /// True when `confirm` applied it (and queued it for the backend).
    public var applied: Bool
    public init(order: [StopETA], applied: Bool) {
        self.order = order
        self.applied = applied
    }
}

/// Params of the `pod.progress` event: a photo upload going on.
public struct PODProgressEvent: Codable, Sendable, Equatable {
    public var taskId: String
    public var sentBytes: Int
    public var totalBytes: Int
    public init(taskId: String, sentBytes: Int, totalBytes: Int) {
        self.taskId = taskId
        self.sentBytes = sentBytes
        self.totalBytes = totalBytes
    }
}

/// Params of the `pod.verdict` event: the backend's answer to a queued proof of delivery.
public struct PODVerdictEvent: Codable, Sendable, Equatable {
    public var taskId: String
    public var type: String
    public var accepted: Bool
    public var message: String?
    public init(taskId: String, type: String, accepted: Bool, message: String?) {
        self.taskId = taskId
        self.type = type
        self.accepted = accepted
        self.message = message
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

/// `route.updated`'s params: the route and the next stop's card as they are after a change, whole, so a screen
/// renders from the notification alone (since API 1.10).
public struct RouteUpdate: Codable, Sendable, Equatable {
    /// As `route.get` answers now.
    public var route: RouteView
    /// As `route.next` answers now.
    public var next: RouteNext
    public init(route: RouteView, next: RouteNext) {
        self.route = route
        self.next = next
    }
}

// MARK: Methods

extension Methods {
    public static let routeGet = Method<NoParams, RouteView>("route.get", mutating: false, screen: true)
    public static let routeNext = Method<NoParams, RouteNext>("route.next", mutating: false, screen: true)
    /// Without `confirm` a preview; with it the order is applied and sent to the backend.
    public static let routeResequence = Method<ResequenceParams, ResequenceResult>("route.resequence", mutating: true)
    public static let navLinks = Method<NavParams, NavResult>("nav.links", mutating: false, screen: true)
    public static let taskAccept = Method<TaskParams, TaskView>("task.accept", mutating: true, screen: true)
    /// At the store or at the destination, from the task's state.
    public static let taskArrive = Method<TaskParams, TaskView>("task.arrive", mutating: true, screen: true)
    public static let taskPickup = Method<TaskParams, TaskView>("task.pickup", mutating: true, screen: true)
    public static let taskDeliver = Method<TaskParams, TaskView>("task.deliver", mutating: true, screen: true)
    public static let taskFail = Method<FailParams, TaskView>("task.fail", mutating: true, screen: true)
    public static let taskReturnToVendor = Method<TaskParams, TaskView>("task.returnToVendor", mutating: true, screen: true)
    public static let podPhoto = Method<PhotoParams, PODResult>("pod.photo", mutating: true)
    public static let podOTP = Method<OTPParams, PODResult>("pod.otp", mutating: true, screen: true)

    /// This file's methods, in `Methods.all`.
    static let workflow: [MethodDescriptor] = [
        routeGet.descriptor, routeNext.descriptor, routeResequence.descriptor, navLinks.descriptor,
        taskAccept.descriptor, taskArrive.descriptor, taskPickup.descriptor, taskDeliver.descriptor,
        taskFail.descriptor, taskReturnToVendor.descriptor, podPhoto.descriptor, podOTP.descriptor,
    ]
}
