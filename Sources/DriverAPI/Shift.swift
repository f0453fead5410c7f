/// Result of `shift.start`, `shift.end` and `shift.status`. Off shift no location is recorded or sent and
/// no push reaches a front end.
public struct ShiftStatus: Codable, Sendable, Equatable {
    public var onShift: Bool
    /// Unix seconds when the current (or last) shift started and ended.
    public var startedAt: Double?
    public var endedAt: Double?
    /// Distance, trips and idling of the current (or last) shift (API 1.7).
    public var travel: ShiftTravel?
    public init(onShift: Bool, startedAt: Double?, endedAt: Double?, travel: ShiftTravel? = nil) {
        self.onShift = onShift
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.travel = travel
    }
}

/// What a shift drove: the odometer (accepted fixes only, gaps bridged as straight lines), trips and idling.
public struct ShiftTravel: Codable, Sendable, Equatable {
    public var odometerMeters: Double
    /// Of `odometerMeters`, bridged across gaps without fixes.
    public var bridgedMeters: Double
    /// Finished trips, and whether one is going on.
    public var trips: Int
    public var tripInProgress: Bool
    /// Engine on while standing, beyond the idle limit (finished periods).
    public var idleSeconds: Double
    /// Harsh braking and acceleration events.
    public var harshEvents: Int
    public init(odometerMeters: Double, bridgedMeters: Double, trips: Int, tripInProgress: Bool, idleSeconds: Double, harshEvents: Int = 0) {
        self.odometerMeters = odometerMeters
        self.bridgedMeters = bridgedMeters
        self.trips = trips
        self.tripInProgress = tripInProgress
        self.idleSeconds = idleSeconds
        self.harshEvents = harshEvents
    }
}

/// The driving-safety gate as the daemon sees it now.
public struct SafetyStatus: Codable, Sendable, Equatable {
    public var state: SafetyState
    /// Speed of the live fix, m/s.
    public var speed: Double?
    /// Above this speed, actions that need the driver's attention wait ("pull over to complete").
    public var limit: Double
    /// Interruptive pushes held until the vehicle stands.
    public var heldPushes: Int
    /// Whether attention-needing actions may go ahead now (API 1.9; absent from older daemons).
    public var open: Bool?
    /// Why they wait, in the daemon's words, while the gate is closed (API 1.9): what a front end shows on
    /// its disabled buttons.
    public var reason: String?
    public init(state: SafetyState, speed: Double?, limit: Double, heldPushes: Int, open: Bool? = nil, reason: String? = nil) {
        self.state = state
        self.speed = speed
        self.limit = limit
        self.heldPushes = heldPushes
        self.open = open
        self.reason = reason
    }
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

/// Result of `auth.logout`.
public struct LogoutResult: Codable, Sendable, Equatable {
    /// Transitions and proofs kept to send after the same driver's next login.
    public var keptItems: Int
    /// Personal data removed: tasks (with names, phones, addresses), uploaded photos, pushes.
    public var removedTasks: Int
    public var removedPhotos: Int
    public init(keptItems: Int, removedTasks: Int, removedPhotos: Int) {
        self.keptItems = keptItems
        self.removedTasks = removedTasks
        self.removedPhotos = removedPhotos
    }
}

// MARK: Methods

extension Methods {
    /// Acknowledges a push: it is not sent again. Interruptive ones only while the vehicle stands.
    public static let eventsAck = Method<AckParams, PushSummary>("events.ack", mutating: true, screen: true)
    /// What pushes wait, said without interrupting (also while driving).
    public static let eventsPending = Method<NoParams, PushSummary>("events.pending", mutating: false, screen: true)
    public static let shiftStart = Method<NoParams, ShiftStatus>("shift.start", mutating: true, screen: true)
    public static let shiftEnd = Method<NoParams, ShiftStatus>("shift.end", mutating: true, screen: true)
    public static let shiftStatus = Method<NoParams, ShiftStatus>("shift.status", mutating: false, screen: true)
    /// Clears personal data and the tokens; keeps what is queued for the same driver's next login.
    public static let authLogout = Method<NoParams, LogoutResult>("auth.logout", mutating: true)

    /// This file's methods, in `Methods.all`.
    static let driver: [MethodDescriptor] = [
        eventsAck.descriptor, eventsPending.descriptor, shiftStart.descriptor, shiftEnd.descriptor,
        shiftStatus.descriptor, authLogout.descriptor,
    ]
}
