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
    /// driverctl: `driverctl route`.
    ///
    /// Params: none. Result: the stops still to visit in order, and the active tasks (plus finished ones the backend
    /// does not have yet):
    ///
    /// ```json
    /// {"stops": [{"id": "task-1001-pickup", "taskId": "task-1001", "kind": "pickup", "status": "en-route",
    ///             "address": "Haidplatz 8, Regensburg", "name": "Pizzeria Da Marco", "phone": "+49 941 000001",
    ///             "lat": 49.021, "lng": 12.097}],
    ///  "tasks": [{"id": "task-1001", "status": "ACCEPTED", "backendStatus": "ACCEPTED", "sync": "synced",
    ///             "podType": "OTP", "pod": "none", "failureReason": null, "allowedActions": ["arrive"],
    ///             "primaryAction": "Arrived", "stops": [...], "updatedAt": 1795852800.5}],
    ///  "syncedAt": 1795852790.1}
    /// ```
    ///
    /// A stop's `status` is derived from its task: `pending`, `en-route` (the next stop), `arrived`, `picked-up`,
    /// `delivered` or `failed`. After a failed delivery the task's pickup opens again: the goods go back to the vendor.
    /// A task's `status` is the local one (a driver action changes it at once); `backendStatus` is what the backend
    /// last confirmed; `sync` is `pending` (queued), `synced` or `rejected` (the backend refused a change: the task
    /// shows the backend's state again and the refused item is a dead letter). `pod` is `none`, `captured` (a photo
    /// waiting to upload), `unverified` (a code queued offline), `accepted` or `rejected`.
    ///
    /// The route is fetched from the backend at start, after the link comes back and on every push that changes tasks;
    /// queued transitions are replayed on top (see `task.conflict`).
    public static let routeGet = Method<NoParams, RouteView>("route.get", mutating: false, screen: true)

    /// driverctl: `driverctl next`.
    ///
    /// Params: none. Result: the next-stop card, or `{"next": null, "remainingStops": 0}`:
    ///
    /// ```json
    /// {"next": {"stop": {...}, "task": {...}, "primaryAction": "Arrived",
    ///           "eta": {"seconds": 240, "distanceMeters": 1900, "source": "local", "computedAt": 1795852800.5},
    ///           "navigation": {"google": "google.navigation:q=49.021,12.097",
    ///                          "googleWeb": "https://www.google.com/maps/dir/?api=1&destination=49.021,12.097",
    ///                          "apple": "maps://?daddr=49.021,12.097", "waze": "waze://?ll=49.021,12.097&navigate=yes",
    ///                          "geo": "geo:49.021,12.097"}},
    ///  "remainingStops": 3}
    /// ```
    ///
    /// `eta.source` is `server` (the backend's ETA, fetched every 30 s while en route and counted down in between) or
    /// `local`: the remaining distance along the task's polyline (to a drop-off) or the straight line × 1.3, over the
    /// average speed of the last 5 minutes of driving (8.3 m/s without one, never below 3 m/s). `eta` is null without
    /// a recent fix. `primaryAction` is the one button a UI shows: `Accept`, `Arrived`, `Picked up`,
    /// `Arrived at destination`, `Capture POD`, `Delivered` or `Return to vendor`.
    public static let routeNext = Method<NoParams, RouteNext>("route.next", mutating: false, screen: true)

    /// Without `confirm` a preview; with it the order is applied and sent to the backend.
    ///
    /// driverctl: `driverctl route --resequence STOP ... [--confirm]`.
    ///
    /// **Mutating.** Params: `{"order": ["task-1002-pickup", "task-1001-dropoff", ...], "confirm": false}`: every stop
    /// still to visit, once, each pickup before its drop-off (else `invalid params` naming the problem). Without
    /// `confirm` it only answers the order with local ETAs; with it the order is stored, queued for the backend
    /// (`PUT /api/v1/rider/route`, through the outbox) and `route.changed` is raised. Result:
    /// `{"order": [{"stopId": "task-1002-pickup", "etaSeconds": 180}, ...], "applied": true}`.
    public static let routeResequence = Method<ResequenceParams, ResequenceResult>("route.resequence", mutating: true)

    /// This file's methods, in `Methods.all`.
    static let route: [MethodDescriptor] = [routeGet.descriptor, routeNext.descriptor, routeResequence.descriptor]
}
