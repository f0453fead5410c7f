/// A method of the local API: its wire name, the types of its params and result, whether it changes state
/// (mutating methods are refused to peers outside the configured group), and whether the driver's screen may
/// call it (the kiosk forwards only those).
///
/// Both ends use the same descriptor, so a typo in a method name or a params type cannot compile.
public struct Method<Params: Codable & Sendable, Result: Codable & Sendable>: Sendable {
    public let name: String
    public let isMutating: Bool
    public let forScreen: Bool

    public init(_ name: String, mutating: Bool, screen: Bool = false) {
        self.name = name
        self.isMutating = mutating
        self.forScreen = screen
    }

    public var descriptor: MethodDescriptor { MethodDescriptor(name: name, isMutating: isMutating, forScreen: forScreen) }
}

/// A method without its types: what registries and checks need.
public struct MethodDescriptor: Sendable, Hashable {
    public let name: String
    public let isMutating: Bool
    public let forScreen: Bool
}

/// Params of a method that takes none. On the wire: absent, `{}` or `[]`.
public struct NoParams: Codable, Sendable, Equatable {
    public init() {}
}

/// Every method of the local API. `docs/API.md` documents each one; a test keeps the two in step.
public enum Methods {
    public static let agentDescribe = Method<NoParams, AgentDescription>("agent.describe", mutating: false, screen: true)
    public static let agentStatus = Method<NoParams, AgentStatus>("agent.status", mutating: false, screen: true)
    public static let agentSetLogLevel = Method<SetLogLevelParams, SetLogLevelResult>(
        "agent.setLogLevel", mutating: true)

    public static let gpsStatus = Method<NoParams, GPSStatus>("gps.status", mutating: false, screen: true)
    /// The latest fix; `unavailable` (1002) before the first.
    public static let gpsFix = Method<NoParams, Fix>("gps.fix", mutating: false)
    public static let gpsRequestRate = Method<RequestRateParams, RequestRateResult>("gps.requestRate", mutating: true)
    public static let eventsSubscribe = Method<SubscribeParams, SubscribeResult>("events.subscribe", mutating: false, screen: true)

    public static let outboxStatus = Method<NoParams, OutboxStatus>("outbox.status", mutating: false, screen: true)
    /// Sends what waits now (overriding a backoff) and answers once that attempt is over.
    public static let outboxFlush = Method<NoParams, OutboxStatus>("outbox.flush", mutating: true)
    public static let authLogin = Method<LoginParams, LoginResult>("auth.login", mutating: true)

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
    /// The latest visits to stops (geofence arrivals and departures), newest first.
    public static let visitsList = Method<NoParams, VisitList>("visits.list", mutating: false)
    /// The latest trips and idle periods, newest first.
    public static let tripsList = Method<NoParams, TripList>("trips.list", mutating: false)

    /// Acknowledges a push: it is not sent again. Interruptive ones only while the vehicle stands.
    public static let eventsAck = Method<AckParams, PushSummary>("events.ack", mutating: true, screen: true)
    /// What pushes wait, said without interrupting (also while driving).
    public static let eventsPending = Method<NoParams, PushSummary>("events.pending", mutating: false, screen: true)
    public static let shiftStart = Method<NoParams, ShiftStatus>("shift.start", mutating: true, screen: true)
    public static let shiftEnd = Method<NoParams, ShiftStatus>("shift.end", mutating: true, screen: true)
    public static let shiftStatus = Method<NoParams, ShiftStatus>("shift.status", mutating: false, screen: true)
    /// Clears personal data and the tokens; keeps what is queued for the same driver's next login.
    public static let authLogout = Method<NoParams, LogoutResult>("auth.logout", mutating: true)

    /// A driver's call for help: stored durably, sent before anything else, repeated until the backend acks it.
    /// Allowed while driving and off shift; refused only when no backend is configured.
    public static let sosRaise = Method<SOSParams, SOSView>("sos.raise", mutating: true, screen: true)

    /// The effective configuration: every key's value and its source (default, file, remote vN, flag).
    public static let configShow = Method<NoParams, ConfigShowResult>("config.show", mutating: false)

    /// Versions, status, disk space, the redacted configuration and the last warnings, for support.
    public static let diagReport = Method<NoParams, DiagReport>("diag.report", mutating: false)

    /// The vehicle as its OBD-II adapter reports it: link, ignition, speed, fuel, odometer, voltage, fault codes (API 1.11).
    public static let vehicleStatus = Method<NoParams, VehicleStatus>("vehicle.status", mutating: false, screen: true)

    /// The installed version, a release on its way in, the maintenance window and the last outcome (API 1.13).
    public static let updateStatus = Method<NoParams, UpdateStatus>("update.status", mutating: false)

    /// Every method, once: the daemon registers a handler for each (a test holds the two equal), the kiosk
    /// forwards those marked for the screen, and docs/API.md documents each.
    public static let all: [MethodDescriptor] = [
        agentDescribe.descriptor, agentStatus.descriptor, agentSetLogLevel.descriptor, gpsStatus.descriptor,
        gpsFix.descriptor, gpsRequestRate.descriptor, eventsSubscribe.descriptor, outboxStatus.descriptor,
        outboxFlush.descriptor, authLogin.descriptor, routeGet.descriptor, routeNext.descriptor,
        routeResequence.descriptor, navLinks.descriptor, taskAccept.descriptor, taskArrive.descriptor,
        taskPickup.descriptor, taskDeliver.descriptor, taskFail.descriptor, taskReturnToVendor.descriptor,
        podPhoto.descriptor, podOTP.descriptor, visitsList.descriptor, tripsList.descriptor, eventsAck.descriptor,
        eventsPending.descriptor, shiftStart.descriptor, shiftEnd.descriptor, shiftStatus.descriptor,
        authLogout.descriptor, sosRaise.descriptor, configShow.descriptor, diagReport.descriptor, vehicleStatus.descriptor,
        updateStatus.descriptor,
    ]
}
