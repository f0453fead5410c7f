/// A notification of the local API: its topic (the notification's `method`) and the type of its `params`.
///
/// Like `Method`, both ends use the same descriptor: the daemon publishes a payload of the right type, a front
/// end decodes it as that type.
public struct Event<Payload: Codable & Sendable>: Sendable {
    public let topic: String

    public init(_ topic: String) { self.topic = topic }
}

/// Every notification of the local API: a notification's `method` is its topic, its `params` the payload.
/// `docs/API.md` documents each one.
public enum Events {
    /// Each recorded fix (so at most the effective sampling rate).
    public static let gpsFix = Event<Fix>("gps.fix")
    /// The backend refused the stored credentials: log in again.
    public static let authRequired = Event<AuthRequiredEvent>("auth.required")
    /// The backend refused a queued transition or proof; the item is kept as a dead letter, never resent.
    public static let outboxRefused = Event<OutboxRefusedEvent>("outbox.refused")
    /// A task changed (a driver action, a sync, a push, an ack or a refusal).
    public static let taskChanged = Event<TaskView>("task.changed")
    /// The backend and the local state disagreed.
    public static let taskConflict = Event<TaskConflictEvent>("task.conflict")
    /// The route (stops or their order) changed.
    public static let routeChanged = Event<RouteView>("route.changed")
    /// After any change of a task or of the stops (an action, an answer, a sync, an arrival): the route and the
    /// next stop's card, whole, coalesced (several changes at once make one). What a screen renders from (API 1.10).
    public static let routeUpdated = Event<RouteUpdate>("route.updated")
    /// A photo upload's progress.
    public static let podProgress = Event<PODProgressEvent>("pod.progress")
    /// The backend's answer to a queued proof of delivery.
    public static let podVerdict = Event<PODVerdictEvent>("pod.verdict")
    /// A push from the backend, kept until `events.ack`; held while the vehicle moves.
    public static let push = Event<PushEvent>("push")
    /// What waits, without interrupting (sent instead of held pushes while driving).
    public static let pushSummary = Event<PushSummary>("push.summary")
    /// The geofence detected an arrival (`arrival.mode` `suggest` or `auto`).
    public static let arrivalSuggested = Event<ArrivalDetected>("arrival.suggested")
    /// The vehicle left a destination whose task still waits for its proof or delivery: push-like, kept until
    /// `events.ack`, held while the vehicle moves (the `push.summary` counts it).
    public static let stopLeftUnfinished = Event<PushEvent>("stop.leftUnfinished")
    /// A visit opened, was marked left unfinished, or closed.
    public static let visitChanged = Event<VisitView>("visit.changed")
    /// A trip or idle period ended and was queued for the backend.
    public static let tripRecorded = Event<TripView>("trip.recorded")
    /// An SOS was raised, and again when the backend acknowledged it.
    public static let sosChanged = Event<SOSView>("sos.changed")
    /// The safety gate opened or closed, with the daemon's reason while it is closed (API 1.9).
    public static let safetyChanged = Event<SafetyStatus>("safety.changed")
    /// The vehicle's adapter link, ignition, check-engine light, fault codes, battery protection or fuel (by a whole
    /// percent) changed: the status whole (API 1.11). Not sent for every speed reading.
    public static let vehicleChanged = Event<VehicleStatus>("vehicle.changed")
    /// The shift started or ended, through any front end or `shift.auto_start` (API 1.12): a second screen shows it
    /// at once, not at its next status read.
    public static let shiftChanged = Event<ShiftStatus>("shift.changed")

    /// Every topic, once: what `events.subscribe` accepts, and what docs/API.md documents.
    public static let topics: [String] = [
        gpsFix.topic, authRequired.topic, outboxRefused.topic, taskChanged.topic, taskConflict.topic, routeChanged.topic, routeUpdated.topic,
        podProgress.topic, podVerdict.topic, push.topic, pushSummary.topic, arrivalSuggested.topic, stopLeftUnfinished.topic,
        visitChanged.topic, tripRecorded.topic, sosChanged.topic, safetyChanged.topic, vehicleChanged.topic,
        shiftChanged.topic,
    ]
}
