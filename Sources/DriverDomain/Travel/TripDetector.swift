import DriverAPI

/// Trips and idling, as telematics units report them, pure. Driven by receiver time (each accepted fix), so
/// replays and real time agree.
///
/// - A trip starts when the vehicle moves with the ignition on (or with no ignition input); it ends once the
///   ignition has been off for `tripEndSeconds`, or the motion detector says the vehicle stands (its verdict
///   already holds a minute of standing, so a red light never ends a trip). It ends at the moment the stand
///   began, with the odometer's reading of that moment.
/// - Idling: the ignition on and the vehicle standing for more than `idleSeconds`; one start and end pair,
///   reported when it ends (ignition off, or driving on).
/// - Without fixes (an underground garage, a dead antenna) only the ignition says anything: `elapsed` ends a
///   trip or an idle period where the last fix was.
public struct TripDetector: Sendable, Equatable, Codable {
    public struct Settings: Sendable, Equatable, Codable {
        public var tripEndSeconds: Double
        public var idleSeconds: Double
        public init(tripEndSeconds: Double = 60, idleSeconds: Double = 300) {
            self.tripEndSeconds = tripEndSeconds
            self.idleSeconds = idleSeconds
        }
    }

    /// Where and when something began.
    public struct Mark: Sendable, Equatable, Codable {
        public var time: Double
        public var odometer: Double
        /// The odometer's bridged part at that moment.
        public var bridged: Double
        public var lat: Double
        public var lng: Double
        public init(time: Double, odometer: Double, bridged: Double = 0, lat: Double, lng: Double) {
            self.time = time
            self.odometer = odometer
            self.bridged = bridged
            self.lat = lat
            self.lng = lng
        }
    }

    public enum Action: Sendable, Equatable {
        case tripStarted(Mark)
        case tripEnded(start: Mark, end: Mark)
        case idleEnded(start: Mark, end: Mark)
    }

    public struct Input: Sendable, Equatable {
        public var time: Double
        public var lat: Double
        public var lng: Double
        public var odometer: Double
        public var bridged: Double
        /// The receiver's speed, m/s.
        public var speed: Double?
        public var motion: Motion
        /// nil: the unit has no ignition input.
        public var ignition: Bool?
        public init(
            time: Double, lat: Double, lng: Double, odometer: Double, bridged: Double = 0, speed: Double?, motion: Motion, ignition: Bool?
        ) {
            self.time = time
            self.lat = lat
            self.lng = lng
            self.odometer = odometer
            self.bridged = bridged
            self.speed = speed
            self.motion = motion
            self.ignition = ignition
        }
    }

    public var settings: Settings
    public private(set) var trip: Mark?
    /// The first fix of the current stand (Doppler speed under `standingSpeed`), and of ignition off.
    public private(set) var slowSince: Mark?
    public private(set) var offSince: Mark?
    /// The first fix of the current roll (Doppler speed at least `standingSpeed`): where a trip begins, before the
    /// motion detector confirms it.
    public private(set) var rollingSince: Mark?
    /// Ignition on and standing since (the stand's first fix).
    public private(set) var standingSince: Mark?
    public private(set) var idling = false
    /// The last fix observed: where the vehicle is taken to be while no fix comes.
    public private(set) var lastSeen: Mark?
    public static let standingSpeed = Odometer.standingSpeed

    public init(settings: Settings = Settings()) { self.settings = settings }

    public mutating func observe(_ input: Input) -> [Action] {
        var actions: [Action] = []
        let here = Mark(time: input.time, odometer: input.odometer, bridged: input.bridged, lat: input.lat, lng: input.lng)
        lastSeen = here
        let ignitionOn = input.ignition ?? true
        // The receiver's speed says when a stand begins and ends; the motion detector only without one.
        let standing = input.speed.map { $0 < Self.standingSpeed } ?? (input.motion == .stationary)
        slowSince = standing ? (slowSince ?? here) : nil
        rollingSince = standing ? nil : (rollingSince ?? here)
        offSince = ignitionOn ? nil : (offSince ?? here)
        // Trips: the motion detector's stationary verdict already holds a minute of standing (a red light is not
        // one), so it ends the trip at once; the ignition off ends it after `tripEndSeconds`.
        if let start = trip {
            let ended: Mark? = if input.motion == .stationary {
                slowSince ?? here
            } else if let off = offSince, input.time - off.time >= settings.tripEndSeconds {
                [slowSince, off].compactMap { $0 }.min { $0.time < $1.time }
            } else {
                nil
            }
            if let end = ended {
                actions.append(.tripEnded(start: start, end: end))
                trip = nil
            }
        } else if input.motion == .moving && ignitionOn {
            let start = rollingSince ?? here
            trip = start
            actions.append(.tripStarted(start))
        }
        // Idling: only a unit with an ignition input knows the engine runs.
        if input.ignition == true && input.motion == .stationary {
            let since = standingSince ?? slowSince ?? here
            standingSince = since
            if input.time - since.time > settings.idleSeconds { idling = true }
        } else {
            if idling, let since = standingSince { actions.append(.idleEnded(start: since, end: here)) }
            idling = false
            standingSince = nil
        }
        return actions
    }

    /// Time passing with no fix since `lastSeen` (`time` on the receiver's time line). The ignition off ends a
    /// trip after `tripEndSeconds` from when it was first seen off, and ends idling at once; the ignition on says
    /// nothing without fixes (the vehicle may be standing or driving).
    public mutating func elapsed(until time: Double, ignition: Bool?) -> [Action] {
        guard ignition == false, let last = lastSeen, time >= last.time else { return [] }
        let off = offSince ?? Mark(time: time, odometer: last.odometer, bridged: last.bridged, lat: last.lat, lng: last.lng)
        offSince = off
        var actions: [Action] = []
        if let start = trip, time - off.time >= settings.tripEndSeconds {
            let end = [slowSince, off].compactMap { $0 }.min { $0.time < $1.time } ?? off
            actions.append(.tripEnded(start: start, end: end))
            trip = nil
        }
        if idling, let since = standingSince { actions.append(.idleEnded(start: since, end: off)) }
        idling = false
        standingSince = nil
        return actions
    }
}
