/// Result of `gps.status`, and the `gps` section of `agent.status`.
public struct GPSStatus: Codable, Sendable, Equatable {
    public var available: Bool
    /// gpsd's address, `HOST:PORT`.
    public var gpsd: String
    /// connecting, connected, noFix (connected, but no usable fix for longer than the sampling interval explains)
    /// or lost.
    public var link: GPSLinkState
    /// Whether sampled fixes are recorded as pings.
    public var tracking: Bool
    /// Fixes received from gpsd since start.
    public var fixesSeen: Int
    /// Pings committed to the store since start, and per motion mode.
    public var pingsRecorded: Int
    public var pingsByMotion: [String: Int]
    /// Pings waiting for the next group commit.
    public var pingsPending: Int
    public var lastFix: Fix?
    /// Seconds since the last accepted fix arrived (monotonic clock), nil before the first.
    public var lastFixAge: Double?
    public var motion: Motion
    /// Times the fix stream broke off (a tunnel, a receiver that lost the sky) and came back.
    public var fixLosses: Int
    /// The last error writing pings, if the last write failed.
    public var lastError: String?
    /// Fixes that passed the quality filter (API 1.6).
    public var fixesAccepted: Int?
    /// Fixes the quality filter rejected, by reason (`FixRejection` names; API 1.6). A rejected fix never
    /// becomes a ping, an action's position, an ETA input or a safety speed.
    public var fixesRejected: [String: Int]?
    /// Times the filter re-anchored on fixes that agreed with each other after rejecting them (API 1.6).
    public var reanchors: Int?

    public init(
        available: Bool = true, gpsd: String, link: GPSLinkState, tracking: Bool, fixesSeen: Int, pingsRecorded: Int,
        pingsByMotion: [String: Int], pingsPending: Int, lastFix: Fix?, lastFixAge: Double?, motion: Motion,
        fixLosses: Int = 0, lastError: String?, fixesAccepted: Int? = nil, fixesRejected: [String: Int]? = nil, reanchors: Int? = nil
    ) {
        self.fixesAccepted = fixesAccepted
        self.fixesRejected = fixesRejected
        self.reanchors = reanchors
        self.fixLosses = fixLosses
        self.available = available
        self.gpsd = gpsd
        self.link = link
        self.tracking = tracking
        self.fixesSeen = fixesSeen
        self.pingsRecorded = pingsRecorded
        self.pingsByMotion = pingsByMotion
        self.pingsPending = pingsPending
        self.lastFix = lastFix
        self.lastFixAge = lastFixAge
        self.motion = motion
        self.lastError = lastError
    }
}

/// The `sampling` section of `agent.status`.
public struct SamplingStatus: Codable, Sendable, Equatable {
    public var available: Bool
    /// The rate in force: the policy's, raised by live requests.
    public var samplingHz: Double
    /// The policy's own rate for the motion and battery mode.
    public var policyHz: Double
    public var batteryMode: BatteryMode
    /// How gpsd is watched: continuous, periodic (paused between samples) or released (receiver may sleep).
    public var watch: GPSWatch
    /// nil without an ignition input.
    public var ignition: Ignition?
    public var requests: [RateRequest]

    public init(
        available: Bool = true, samplingHz: Double, policyHz: Double, batteryMode: BatteryMode, watch: GPSWatch,
        ignition: Ignition?, requests: [RateRequest]
    ) {
        self.available = available
        self.samplingHz = samplingHz
        self.policyHz = policyHz
        self.batteryMode = batteryMode
        self.watch = watch
        self.ignition = ignition
        self.requests = requests
    }
}

/// A live rate request: it lasts as long as the connection that made it.
public struct RateRequest: Codable, Sendable, Equatable {
    public var connection: UInt64
    public var pid: Int32
    public var uid: UInt32
    public var hz: Double

    public init(connection: UInt64, pid: Int32, uid: UInt32, hz: Double) {
        self.connection = connection
        self.pid = pid
        self.uid = uid
        self.hz = hz
    }
}

/// Params of `gps.requestRate`. `hz` 0 withdraws the caller's request.
public struct RequestRateParams: Codable, Sendable, Equatable {
    public var hz: Double
    public init(hz: Double) { self.hz = hz }
}

public struct RequestRateResult: Codable, Sendable, Equatable {
    public var requestedHz: Double
    public var effectiveHz: Double
    public init(requestedHz: Double, effectiveHz: Double) {
        self.requestedHz = requestedHz
        self.effectiveHz = effectiveHz
    }
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

/// Notification topics. A notification's `method` is its topic; its `params` the payload.
public enum EventTopic {
    /// Each recorded fix (so at most the effective sampling rate); params: a `Fix`.
    public static let gpsFix = "gps.fix"

    /// The backend refused the stored credentials; params: an `AuthRequiredEvent`. Log in again.
    public static let authRequired = "auth.required"

    /// The backend refused a queued transition or proof (409/422 …); params: an `OutboxRefusedEvent`. The item
    /// is kept as a dead letter with the backend's answer and never resent.
    public static let outboxRefused = "outbox.refused"

    /// A task changed (a driver action, a sync, a push, an ack or a refusal); params: a `TaskView`.
    public static let taskChanged = "task.changed"
    /// The backend and the local state disagreed; params: a `TaskConflictEvent`.
    public static let taskConflict = "task.conflict"
    /// The route (stops or their order) changed; params: a `RouteView`.
    public static let routeChanged = "route.changed"
    /// A photo upload's progress; params: a `PODProgressEvent`.
    public static let podProgress = "pod.progress"
    /// The backend's answer to a queued proof of delivery; params: a `PODVerdictEvent`.
    public static let podVerdict = "pod.verdict"

    /// A push from the backend (new order, route changed, task cancelled, customer message); params: a
    /// `PushEvent`. Kept until `events.ack`; unacknowledged ones are sent again to each new subscriber.
    /// Interruptive pushes are held while the vehicle moves.
    public static let push = "push"
    /// What waits, without interrupting (sent instead of held pushes while driving); params: a `PushSummary`.
    public static let pushSummary = "push.summary"
    /// The geofence detected an arrival; params: an `ArrivalDetected`.
    public static let arrivalSuggested = "arrival.suggested"
    /// The vehicle left a destination with the task unfinished; params: a `PushEvent` (kind `STOP_LEFT_UNFINISHED`).
    public static let stopLeftUnfinished = "stop.leftUnfinished"
    /// A visit opened (an arrival), was marked left unfinished, or closed (a departure); params: a `VisitView`.
    public static let visitChanged = "visit.changed"
    /// A trip or an idle period ended and was queued for the backend; params: a `TripView`.
    public static let tripRecorded = "trip.recorded"
    /// An SOS was raised, or the backend acknowledged it; params: an `SOSView` (API 1.8).
    public static let sosChanged = "sos.changed"
    /// The safety gate opened (the vehicle stands) or closed (it moves); params: a `SafetyStatus` (API 1.9).
    public static let safetyChanged = "safety.changed"

    public static let all = [
        gpsFix, authRequired, outboxRefused, taskChanged, taskConflict, routeChanged, podProgress, podVerdict, push, pushSummary,
        arrivalSuggested, stopLeftUnfinished, visitChanged, tripRecorded, sosChanged, safetyChanged,
    ]
}
