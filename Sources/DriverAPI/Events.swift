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

/// Params of `events.subscribe`.
public struct SubscribeParams: Codable, Sendable, Equatable {
    public var topics: [String]
    public init(topics: [String]) { self.topics = topics }
}

public struct SubscribeResult: Codable, Sendable, Equatable {
    /// Every topic this connection now receives.
    public var topics: [String]
    public init(topics: [String]) { self.topics = topics }
}

/// Params of the `push.summary` event and result of `events.pending`: what waits, said without interrupting.
/// `push.summary` also goes out after every acknowledgement (API 1.9), so every front end knows what is left.
public struct PushSummary: Codable, Sendable, Equatable {
    /// Unacknowledged pushes, and how many of them are held because the vehicle moves.
    public var pending: Int
    public var held: Int
    /// "1 new order, 2 messages" (empty when nothing waits).
    public var summary: String
    /// The ids of the unacknowledged pushes (API 1.9): a screen drops what another front end acknowledged.
    public var ids: [Int]?
    public init(pending: Int, held: Int, summary: String, ids: [Int]? = nil) {
        self.pending = pending
        self.held = held
        self.summary = summary
        self.ids = ids
    }
}

/// Params of `events.ack`.
public struct AckParams: Codable, Sendable, Equatable {
    public var id: Int
    public init(id: Int) { self.id = id }
}

/// A push from the backend as front ends get it (topic `push`), kept until a front end acknowledges it.
public struct PushEvent: Codable, Sendable, Equatable {
    public var id: Int
    /// `TASK_ASSIGNED`, `ROUTE_CHANGED`, `TASK_CANCELLED` or `CUSTOMER_MESSAGE`.
    public var kind: String
    public var taskId: String?
    /// The customer's or dispatcher's text (personal data: shown, never logged).
    public var message: String?
    /// A short line a UI or a voice can read: "New order task-1003".
    public var title: String
    /// Interruptive pushes (all of these kinds) are held while the vehicle moves.
    public var interruptive: Bool
    public var receivedAt: Double
    public init(id: Int, kind: String, taskId: String?, message: String?, title: String, interruptive: Bool, receivedAt: Double) {
        self.id = id
        self.kind = kind
        self.taskId = taskId
        self.message = message
        self.title = title
        self.interruptive = interruptive
        self.receivedAt = receivedAt
    }
}

// MARK: Methods

extension Methods {
    /// driverctl: `driverctl watch` (every topic a screen needs; Ctrl-C to leave).
    ///
    /// Params: `{"topics": ["gps.fix"]}`. Result: `{"topics": [...]}`, every topic this connection now receives.
    /// Notifications then arrive on the same connection as JSON-RPC notifications whose `method` is the topic (each
    /// topic and its `params`: docs/API.md, "Notifications").
    ///
    /// A subscription ends with its connection. A subscriber that does not read keeps only the newest 256
    /// notifications.
    public static let eventsSubscribe = Method<SubscribeParams, SubscribeResult>("events.subscribe", mutating: false, screen: true)

    /// Acknowledges a push: it is not sent again. Interruptive ones only while the vehicle stands.
    ///
    /// driverctl: `driverctl ack ID`.
    ///
    /// **Mutating.** Params: `{"id": 17}`, a push's id. The push is deleted and not sent again. An interruptive push
    /// (all of them today) can only be acknowledged while the vehicle stands (`1006` otherwise). `not found` (1004)
    /// for an unknown id. Result: as `events.pending`.
    public static let eventsAck = Method<AckParams, PushSummary>("events.ack", mutating: true, screen: true)

    /// What pushes wait, said without interrupting (also while driving).
    ///
    /// driverctl: `driverctl watch` (the messages waiting).
    ///
    /// Params: none. Result: `{"pending": 2, "held": 1, "summary": "1 new order, 1 message", "ids": [17, 18]}`: what
    /// waits, in words a glance or a voice can take while driving. `held` counts pushes not yet shown because the
    /// vehicle moves; `ids` (API 1.9) are the unacknowledged pushes. After each `events.ack` the same object goes out
    /// as `push.summary` to every subscriber, so a screen drops a push another front end acknowledged.
    public static let eventsPending = Method<NoParams, PushSummary>("events.pending", mutating: false, screen: true)

    /// This file's methods, in `Methods.all`.
    static let events: [MethodDescriptor] = [eventsSubscribe.descriptor, eventsAck.descriptor, eventsPending.descriptor]
}
