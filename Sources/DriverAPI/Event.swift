/// A notification of the local API: its topic (the notification's `method`) and the type of its `params`.
///
/// Like `Method`, both ends use the same descriptor: the daemon publishes a payload of the right type, a front
/// end decodes it as that type.
public struct Event<Payload: Codable & Sendable>: Sendable {
    public let topic: String

    public init(_ topic: Topic) { self.topic = topic.rawValue }
}

/// Every topic of the local API, once: what `events.subscribe` accepts (`Events.topics`), each the topic of one
/// descriptor in `Events`. docs/API.md's list is checked against it.
public enum Topic: String, CaseIterable, Sendable {
    case gpsFix = "gps.fix"
    case authRequired = "auth.required"
    case outboxRefused = "outbox.refused"
    case taskChanged = "task.changed"
    case taskConflict = "task.conflict"
    case routeChanged = "route.changed"
    case routeUpdated = "route.updated"
    case podProgress = "pod.progress"
    case podVerdict = "pod.verdict"
    case push = "push"
    case pushSummary = "push.summary"
    case arrivalSuggested = "arrival.suggested"
    case stopLeftUnfinished = "stop.leftUnfinished"
    case visitChanged = "visit.changed"
    case tripRecorded = "trip.recorded"
    case sosChanged = "sos.changed"
    case safetyChanged = "safety.changed"
    case vehicleChanged = "vehicle.changed"
    case shiftChanged = "shift.changed"
}

/// Every notification of the local API: a notification's `method` is its topic, its `params` the payload.
/// `docs/API.md` documents each one.
public enum Events {
    /// Each recorded fix (so at most the effective sampling rate).
    public static let gpsFix = Event<Fix>(.gpsFix)
    /// The backend refused the stored credentials: log in again.
    public static let authRequired = Event<AuthRequiredEvent>(.authRequired)
    /// The backend refused a queued transition or proof; the item is kept as a dead letter, never resent.
    public static let outboxRefused = Event<OutboxRefusedEvent>(.outboxRefused)
    /// A task changed (a driver action, a sync, a push, an ack or a refusal).
    public static let taskChanged = Event<TaskView>(.taskChanged)
    /// The backend and the local state disagreed.
    public static let taskConflict = Event<TaskConflictEvent>(.taskConflict)
    /// The route (stops or their order) changed.
    public static let routeChanged = Event<RouteView>(.routeChanged)
    /// After any change of a task or of the stops (an action, an answer, a sync, an arrival): the route and the
    /// next stop's card, whole, coalesced (several changes at once make one). What a screen renders from (API 1.10).
    public static let routeUpdated = Event<RouteUpdate>(.routeUpdated)
    /// A photo upload's progress.
    public static let podProgress = Event<PODProgressEvent>(.podProgress)
    /// The backend's answer to a queued proof of delivery.
    public static let podVerdict = Event<PODVerdictEvent>(.podVerdict)
    /// A push from the backend, kept until `events.ack`; held while the vehicle moves.
    public static let push = Event<PushEvent>(.push)
    /// What waits, without interrupting (sent instead of held pushes while driving).
    public static let pushSummary = Event<PushSummary>(.pushSummary)
    /// The geofence detected an arrival (`arrival.mode` `suggest` or `auto`).
    public static let arrivalSuggested = Event<ArrivalDetected>(.arrivalSuggested)
    /// The vehicle left a destination whose task still waits for its proof or delivery: push-like, kept until
    /// `events.ack`, held while the vehicle moves (the `push.summary` counts it).
    public static let stopLeftUnfinished = Event<PushEvent>(.stopLeftUnfinished)
    /// A visit opened, was marked left unfinished, or closed.
    public static let visitChanged = Event<VisitView>(.visitChanged)
    /// A trip or idle period ended and was queued for the backend.
    public static let tripRecorded = Event<TripView>(.tripRecorded)
    /// An SOS was raised, and again when the backend acknowledged it.
    public static let sosChanged = Event<SOSView>(.sosChanged)
    /// The safety gate opened or closed, with the daemon's reason while it is closed (API 1.9).
    public static let safetyChanged = Event<SafetyStatus>(.safetyChanged)
    /// The vehicle's adapter link, ignition, check-engine light, fault codes, battery protection or fuel (by a whole
    /// percent) changed: the status whole (API 1.11). Not sent for every speed reading.
    public static let vehicleChanged = Event<VehicleStatus>(.vehicleChanged)
    /// The shift started or ended, through any front end or `shift.auto_start` (API 1.12): a second screen shows it
    /// at once, not at its next status read.
    public static let shiftChanged = Event<ShiftStatus>(.shiftChanged)

    /// What `events.subscribe` accepts.
    public static let topics: [String] = Topic.allCases.map(\.rawValue)
}
