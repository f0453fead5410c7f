import DriverAPI

/// Arrival at and departure from stops by geofence, pure: fed every accepted fix with the motion detector's
/// verdict and the stops to watch, it says when the vehicle arrived at a stop it was approaching and when it
/// left a stop it had arrived at.
///
/// - A stop's geofence is its radius, never smaller than the fix's own error (`eph`), and an exit border 1.5×
///   wider: jitter on the edge can neither arrive twice nor leave.
/// - Arrived: inside the radius and slower than `slowSpeed` for `dwellSeconds` (staying within the exit border
///   while it counts), or stationary inside the radius.
/// - Left: beyond the exit border and driving (the receiver's speed at least `slowSpeed`; without a speed, the
///   motion detector says moving) on `departureFixes` fixes in a row. Parked scatter has no speed, so it never
///   leaves.
public struct GeofenceWatch: Sendable, Equatable {
    public struct Settings: Sendable, Equatable {
        public var dwellSeconds: Double
        public var slowSpeed: Double
        public var exitFactor: Double
        public var departureFixes: Int
        public init(dwellSeconds: Double = 20, slowSpeed: Double = 2, exitFactor: Double = 1.5, departureFixes: Int = 2) {
            self.dwellSeconds = dwellSeconds
            self.slowSpeed = slowSpeed
            self.exitFactor = exitFactor
            self.departureFixes = departureFixes
        }

        /// The exit border of a stop's geofence for a fix with this error.
        public func exitBorder(_ radius: Double, horizontalError: Double?) -> Double {
            GeofenceWatch.effectiveRadius(radius, horizontalError: horizontalError) * exitFactor
        }
    }

    /// A stop to watch, and what its task waits for there.
    public struct Target: Sendable, Equatable {
        public enum Stage: Sendable, Equatable {
            /// The task's next step is arriving here: watch for the arrival.
            case approaching
            /// Arrived, the stop's action (pickup, delivery or failure) not done yet: watch for leaving it undone.
            case serving
            /// The stop's action is done and the visit still open: watch for leaving.
            case served
        }

        public var stopId: String
        public var taskId: String
        public var lat: Double
        public var lng: Double
        public var radius: Double
        public var stage: Stage
        public init(stopId: String, taskId: String, lat: Double, lng: Double, radius: Double, stage: Stage) {
            self.stopId = stopId
            self.taskId = taskId
            self.lat = lat
            self.lng = lng
            self.radius = radius
            self.stage = stage
        }
    }

    public typealias Sample = FixPoint

    public enum Action: Sendable, Equatable {
        /// Arrived at an `approaching` stop: `distance` from the stop at that fix, `dwell` seconds spent slow inside.
        case arrived(stopId: String, taskId: String, distance: Double, dwell: Double, time: Double)
        /// Left a stop through its exit border; `unfinished` when its action was still to do. `departedEarlier`: the
        /// action was done away from the stop after it was left unfinished (the van never came back), so the
        /// vehicle left when that earlier departure said, not now.
        case left(stopId: String, taskId: String, distance: Double, time: Double, unfinished: Bool, departedEarlier: Bool = false)
    }

    private enum Presence: Sendable, Equatable {
        case outside
        /// Slow inside since `since`.
        case dwelling(since: Double)
        /// Arrival reported (approaching), or the vehicle is at the stop (serving, served).
        case present
        /// Beyond the exit border and driving, on this many fixes in a row.
        case leaving(count: Int)
        /// Left while the stop's action was undone (reported once); back inside makes it present again.
        case away
    }

    public let settings: Settings
    private var presence: [String: Presence] = [:]

    public init(settings: Settings = Settings()) { self.settings = settings }

    /// The radius a fix is judged against: the stop's, or the fix's own error when that is larger.
    public static func effectiveRadius(_ radius: Double, horizontalError: Double?) -> Double { max(radius, horizontalError ?? 0) }

    public func exitBorder(_ radius: Double, horizontalError: Double?) -> Double { settings.exitBorder(radius, horizontalError: horizontalError) }

    public mutating func observe(_ sample: Sample, motion: Motion, targets: [Target]) -> [Action] {
        // Stops no longer watched are forgotten; a stop watched again starts outside.
        let watched = Set(targets.map(\.stopId))
        presence = presence.filter { watched.contains($0.key) }
        var actions: [Action] = []
        for target in targets {
            let radius = Self.effectiveRadius(target.radius, horizontalError: sample.horizontalError)
            let exit = radius * settings.exitFactor
            let distance = Geo.distance(latitude1: sample.lat, longitude1: sample.lng, latitude2: target.lat, longitude2: target.lng)
            // The receiver's Doppler speed decides; the motion detector only when the receiver gives none (it
            // says moving for a minute after the vehicle stops, by design).
            let driving = sample.speed.map { $0 >= settings.slowSpeed } ?? (motion == .moving)
            let current = presence[target.stopId] ?? (target.stage == .approaching ? .outside : .present)
            let (next, action) = step(current, target: target, sample: sample, motion: motion, distance: distance, radius: radius, exit: exit, driving: driving)
            presence[target.stopId] = next
            if let action { actions.append(action) }
        }
        return actions
    }

    private func step(
        _ current: Presence, target: Target, sample: Sample, motion: Motion, distance: Double, radius: Double, exit: Double,
        driving: Bool
    ) -> (Presence, Action?) {
        switch target.stage {
        case .approaching:
            switch current {
            case .outside, .leaving, .away:
                guard distance <= radius else { return (.outside, nil) }
                if motion == .stationary { return arrived(target, distance, dwell: 0, sample) }
                return driving ? (.outside, nil) : (.dwelling(since: sample.time), nil)
            case .dwelling(let since):
                guard distance <= exit, !driving || motion == .stationary else { return (.outside, nil) }
                let dwell = sample.time - since
                if dwell >= settings.dwellSeconds || (motion == .stationary && distance <= radius) {
                    return arrived(target, distance, dwell: dwell, sample)
                }
                return (current, nil)
            case .present:
                // Reported once; driving away without the arrival being taken starts over.
                return distance > exit && driving ? (.outside, nil) : (.present, nil)
            }
        case .serving, .served:
            let beyond = distance > exit && driving
            switch current {
            case .away:
                if target.stage == .served { return left(target, distance, sample, unfinished: false, departedEarlier: true) }
                return distance <= radius ? (.present, nil) : (.away, nil)
            case .leaving(let count):
                guard beyond else { return (.present, nil) }
                return count + 1 >= settings.departureFixes
                    ? left(target, distance, sample, unfinished: target.stage == .serving) : (.leaving(count: count + 1), nil)
            case .outside, .dwelling, .present:
                guard beyond else { return (.present, nil) }
                return settings.departureFixes <= 1
                    ? left(target, distance, sample, unfinished: target.stage == .serving) : (.leaving(count: 1), nil)
            }
        }
    }

    private func arrived(_ target: Target, _ distance: Double, dwell: Double, _ sample: Sample) -> (Presence, Action?) {
        (.present, .arrived(stopId: target.stopId, taskId: target.taskId, distance: distance, dwell: max(0, dwell), time: sample.time))
    }

    private func left(_ target: Target, _ distance: Double, _ sample: Sample, unfinished: Bool, departedEarlier: Bool = false) -> (Presence, Action?) {
        (unfinished ? .away : .outside, .left(
            stopId: target.stopId, taskId: target.taskId, distance: distance, time: sample.time, unfinished: unfinished, departedEarlier: departedEarlier))
    }
}
