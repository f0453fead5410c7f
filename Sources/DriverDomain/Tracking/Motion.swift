import DriverAPI

/// Thresholds of the motion detector (the design brief's defaults, except where noted).
public struct MotionThresholds: Sendable, Equatable {
    /// Speed that counts as moving, once sustained for `movingConfirmation`.
    public var movingSpeed = 1.5
    /// Distance beyond the receiver's error from the stationary centre that counts as moving (when the
    /// receiver does not report that it stands still).
    public var movingDistance = 25.0
    /// Below this speed for `stationaryDuration`, with the positions' centre staying put, the vehicle stands.
    public var stationarySpeed = 0.5
    /// How far the positions' centre may wander while standing, metres: at least this, at least twice the
    /// receiver's error estimate, at least what the scatter itself explains.
    public var stationaryRadius = 15.0
    /// 65 s rather than the brief's 60: a vehicle waiting out a 60-s red light must not count as parked (its
    /// slow spell, braking and pulling away included, lasts a little over 60 s).
    public var stationaryDuration = 65.0
    /// How long moving evidence must last before the mode flips: one fast jitter spike never does.
    public var movingConfirmation = 2.0
    /// A run of speeds at or above `stationarySpeed` this long (creeping in a queue) restarts the stationary
    /// window; a shorter one is a Doppler outlier of a parked receiver.
    public var creepRun = 1.0
    /// The largest share of outlier speeds a stationary window may hold.
    public var maxOutlierShare = 0.1

    public init() {}
}

/// The motion detector: a pure state machine over accepted fixes (and an ignition signal that overrides them),
/// with hysteresis so that stationary jitter never flips the mode. Time is the fixes' own.
///
/// Standing still is decided by the receiver's speed (Doppler, accurate to a few cm/s) staying below
/// `stationarySpeed` for `stationaryDuration`, and the positions not contradicting it: the median centre of the
/// window's newer half may lie only so far from its older half's (the radius, widened by the receiver's `eph`
/// and by what the scatter itself explains). Single fixes may scatter by tens of metres and spike by more: a
/// median ignores them. Moving needs speed or a displacement from that centre, sustained.
public struct MotionDetector: Sendable {
    public enum Action: Equatable, Sendable {
        case changed(to: Motion)
    }

    private enum State: Sendable {
        case unknown
        /// `evidenceSince`: time of the first fix of an unbroken run of moving evidence.
        case stationary(evidenceSince: Double?)
        case moving
    }

    /// An unbroken spell of slow speeds while moving: the candidate for standing still.
    private struct SlowSpell: Sendable {
        var since: Double
        /// Start of the current run of outlier (fast) speeds inside the spell.
        var fastSince: Double?
        var samples = 0
        var outliers = 0
        var withoutSpeed = 0
    }

    public let thresholds: MotionThresholds
    private var state: State = .unknown
    /// Moving: the positions of the slow spell; stationary: the recent slow positions, whose median is the
    /// centre displacement is measured from.
    private var window: PositionWindow
    private var spell: SlowSpell?
    private var lastTime: Double?
    /// nil: no ignition input; true/false: the input overrides GPS.
    private var ignition: Bool?
    /// The vehicle's own speed (OBD-II), with its own hysteresis on the monotonic clock: it decides while the
    /// receiver has no usable fix (a tunnel, a loading bay), and the fixes decide again once they come.
    private var vehicle = VehicleSpeedMotion()
    private var gnssUsable = true

    public init(thresholds: MotionThresholds = MotionThresholds()) {
        self.thresholds = thresholds
        window = PositionWindow(span: thresholds.stationaryDuration)
    }

    public var motion: Motion {
        if let ignition { return ignition ? .moving : .stationary }
        return movement
    }

    /// Whether the vehicle itself moves, whatever the ignition: the fixes, or the vehicle's speed while the fixes
    /// cannot tell (an engine idling at a kerb is not movement).
    public var movement: Motion {
        if !gnssUsable, let byVehicle = vehicle.motion { return byVehicle }
        return gpsMotion
    }

    /// Stationary, but the latest fixes suggest movement that is not yet confirmed: a caller sampling
    /// slowly should look again soon rather than in ten seconds.
    public var isConfirmingMovement: Bool {
        if case .stationary(let evidenceSince) = state, evidenceSince != nil, ignition == nil { return true }
        return false
    }

    /// What the fixes alone say, whatever the ignition: trips, idling and geofences need the vehicle's own
    /// movement (the engine runs while it idles).
    public var gpsMotion: Motion {
        switch state {
        case .unknown: .unknown
        case .stationary: .stationary
        case .moving: .moving
        }
    }

    /// The ignition input changed (nil: the input went away, GPS decides again). While present it overrides
    /// GPS: on means moving, off means stationary.
    public mutating func ignition(_ on: Bool?) -> Action? {
        let before = motion
        ignition = on
        return motion != before ? .changed(to: motion) : nil
    }

    /// The vehicle's speed at `now` (monotonic seconds; nil: the adapter stopped answering), and whether the
    /// receiver has a usable fix now.
    public mutating func vehicleSpeed(_ speed: Double?, at now: Double, gnssUsable: Bool) -> Action? {
        let before = motion
        self.gnssUsable = gnssUsable
        if let speed { vehicle.observe(speed, at: now, thresholds: thresholds) } else { vehicle = VehicleSpeedMotion() }
        return motion != before ? .changed(to: motion) : nil
    }

    public mutating func observe(_ fix: Fix) -> Action? {
        let before = motion
        // Time going backwards (a receiver reset, a replayed log): start the evidence windows afresh.
        if let lastTime, fix.time < lastTime { restartWindows() }
        lastTime = fix.time
        gnssUsable = true
        step(fix)
        let after = motion
        return after != before ? .changed(to: after) : nil
    }

    private mutating func restartWindows() {
        window.removeAll()
        spell = nil
        if case .stationary = state { state = .stationary(evidenceSince: nil) }
    }

    private mutating func step(_ fix: Fix) {
        switch state {
        case .unknown:
            if let speed = fix.speed, speed >= thresholds.movingSpeed {
                state = .moving
            } else {
                window.add(fix)
                state = .stationary(evidenceSince: nil)
            }
        case .stationary(let evidenceSince):
            guard isMovingEvidence(fix) else {
                window.add(fix)
                state = .stationary(evidenceSince: nil)
                return
            }
            let since = evidenceSince ?? fix.time
            if fix.time - since >= thresholds.movingConfirmation {
                window.removeAll()
                spell = nil
                state = .moving
            } else {
                state = .stationary(evidenceSince: since)
            }
        case .moving:
            if standsStill(after: fix) {
                spell = nil
                state = .stationary(evidenceSince: nil)
            }
        }
    }

    /// Follows the slow spell with `fix`; true once it proves the vehicle stands.
    private mutating func standsStill(after fix: Fix) -> Bool {
        let fast = fix.speed.map { $0 >= thresholds.stationarySpeed } ?? false
        if fast {
            guard var current = spell else { return false }
            let runStart = current.fastSince ?? fix.time
            // Creeping, or pulling away: the spell is over.
            if fix.time - runStart >= thresholds.creepRun {
                spell = nil
                window.removeAll()
                return false
            }
            current.fastSince = runStart
            current.outliers += 1
            spell = current
        } else if spell == nil {
            window.removeAll()
            spell = SlowSpell(since: fix.time)
        } else {
            spell?.fastSince = nil
        }
        guard var current = spell else { return false }
        current.samples += 1
        if fix.speed == nil { current.withoutSpeed += 1 }
        spell = current
        window.add(fix)
        guard fix.time - current.since >= thresholds.stationaryDuration else { return false }
        guard Double(current.outliers) <= thresholds.maxOutlierShare * Double(current.samples) else { return false }
        let radius = max(thresholds.stationaryRadius, 2 * (window.medianError ?? 0))
        // The centre must stay put (a creeping vehicle with a speed that reads low moves it).
        guard window.centreDrift <= max(radius, window.driftFromScatter) else { return false }
        // Without speeds the positions alone must show it: most of them close to the centre.
        if current.withoutSpeed * 2 > current.samples, window.shareWithin(radius) < 0.8 { return false }
        return true
    }

    /// Speed at or above the moving threshold, or a displacement past the moving distance from the stationary
    /// centre that the receiver does not contradict by reporting that it stands still (a fix regained after a
    /// loss may land metres away).
    private func isMovingEvidence(_ fix: Fix) -> Bool {
        if let speed = fix.speed, speed >= thresholds.movingSpeed { return true }
        guard let distance = window.distanceFromCentre(fix) else { return false }
        let displaced = distance - (fix.horizontalError ?? 0) >= thresholds.movingDistance
        return displaced && (fix.speed.map { $0 >= thresholds.stationarySpeed } ?? true)
    }
}

/// Motion from the vehicle's speed alone: moving after `movingConfirmation` at or above `movingSpeed`, stationary
/// after `stationaryDuration` below `stationarySpeed` (the wheels' speed has no jitter, but a queue creeps). No
/// verdict until one of the two has lasted.
struct VehicleSpeedMotion: Sendable, Equatable {
    private(set) var motion: Motion?
    private var fastSince: Double?
    private var slowSince: Double?

    mutating func observe(_ speed: Double, at now: Double, thresholds: MotionThresholds) {
        if speed >= thresholds.movingSpeed {
            slowSince = nil
            let since = fastSince ?? now
            fastSince = since
            if now - since >= thresholds.movingConfirmation { motion = .moving }
        } else if speed < thresholds.stationarySpeed {
            fastSince = nil
            let since = slowSince ?? now
            slowSince = since
            if now - since >= thresholds.stationaryDuration { motion = .stationary }
        } else {
            fastSince = nil
            slowSince = nil
        }
    }
}
