/// A notification of the local API: its topic (the notification's `method`) and the type of its `params`.
///
/// Like `Method`, both ends use the same descriptor: the daemon publishes a payload of the right type, a front
/// end decodes it as that type.
public struct Event<Payload: Codable & Sendable>: Sendable {
    public let topic: String

    public init(_ topic: String) { self.topic = topic }
}

/// Every notification of the local API. `docs/API.md` documents each one.
public enum Events {
    /// Each recorded fix (so at most the effective sampling rate).
    public static let gpsFix = Event<Fix>(EventTopic.gpsFix)
    /// The backend refused the stored credentials: log in again.
    public static let authRequired = Event<AuthRequiredEvent>(EventTopic.authRequired)
    /// The backend refused a queued transition or proof; the item is kept as a dead letter, never resent.
    public static let outboxRefused = Event<OutboxRefusedEvent>(EventTopic.outboxRefused)
    /// A task changed (a driver action, a sync, a push, an ack or a refusal).
    public static let taskChanged = Event<TaskView>(EventTopic.taskChanged)
    /// The backend and the local state disagreed.
    public static let taskConflict = Event<TaskConflictEvent>(EventTopic.taskConflict)
    /// The route (stops or their order) changed.
    public static let routeChanged = Event<RouteView>(EventTopic.routeChanged)
    /// A photo upload's progress.
    public static let podProgress = Event<PODProgressEvent>(EventTopic.podProgress)
    /// The backend's answer to a queued proof of delivery.
    public static let podVerdict = Event<PODVerdictEvent>(EventTopic.podVerdict)
    /// A push from the backend, kept until `events.ack`; held while the vehicle moves.
    public static let push = Event<PushEvent>(EventTopic.push)
    /// What waits, without interrupting (sent instead of held pushes while driving).
    public static let pushSummary = Event<PushSummary>(EventTopic.pushSummary)
    /// The geofence detected an arrival (`arrival.mode` `suggest` or `auto`).
    public static let arrivalSuggested = Event<ArrivalDetected>(EventTopic.arrivalSuggested)
    /// The vehicle left a destination whose task still waits for its proof or delivery: push-like, kept until
    /// `events.ack`, held while the vehicle moves (the `push.summary` counts it).
    public static let stopLeftUnfinished = Event<PushEvent>(EventTopic.stopLeftUnfinished)
    /// A visit opened, was marked left unfinished, or closed.
    public static let visitChanged = Event<VisitView>(EventTopic.visitChanged)
    /// A trip or idle period ended and was queued for the backend.
    public static let tripRecorded = Event<TripView>(EventTopic.tripRecorded)
    /// An SOS was raised, and again when the backend acknowledged it.
    public static let sosChanged = Event<SOSView>(EventTopic.sosChanged)
    /// The safety gate opened or closed, with the daemon's reason while it is closed (API 1.9).
    public static let safetyChanged = Event<SafetyStatus>(EventTopic.safetyChanged)
}
