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

// MARK: Methods

extension Methods {
    /// driverctl: `driverctl shift start`.
    ///
    /// **Mutating.** Params: none. Starts the shift: GPS fixes are recorded and sent again, pushes reach front ends.
    /// Result: `{"onShift": true, "startedAt": 1795852800.5, "endedAt": null}`. Off shift no location is recorded
    /// or sent, driver actions carry no position, and pushes wait. The state survives restarts; `shift.auto_start`
    /// starts a shift when the daemon starts (units without a driver UI).
    public static let shiftStart = Method<NoParams, ShiftStatus>("shift.start", mutating: true, screen: true)

    /// driverctl: `driverctl shift end`.
    ///
    /// **Mutating.** Params: none. Ends the shift: recording stops at once, and the pings the shift recorded go out in
    /// one last flush before the call answers. Result: as `shift.start`.
    public static let shiftEnd = Method<NoParams, ShiftStatus>("shift.end", mutating: true, screen: true)

    /// driverctl: `driverctl shift status`.
    ///
    /// Params: none. Result: as `shift.start`.
    ///
    /// Every `shift.*` result carries `travel` (API 1.7): `{"odometerMeters": 12840, "bridgedMeters": 310, "trips": 4,
    /// "tripInProgress": true, "idleSeconds": 420, "harshEvents": 1}`, what the current (or last) shift drove
    /// (`harshEvents`: harsh braking and acceleration, each sent to the backend as `POST /api/v1/rider/harsh-events`);
    /// `shift.end`'s answer is the shift's end report. Each task's `distanceMeters` is the odometer from its acceptance
    /// to its delivery (or return to the vendor), so far while it is open.
    public static let shiftStatus = Method<NoParams, ShiftStatus>("shift.status", mutating: false, screen: true)

    /// This file's methods, in `Methods.all`.
    static let shift: [MethodDescriptor] = [shiftStart.descriptor, shiftEnd.descriptor, shiftStatus.descriptor]
}
