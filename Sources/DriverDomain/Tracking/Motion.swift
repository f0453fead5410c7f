import DriverAPI
/// Whether the vehicle moves, as the detector judges it.
public enum Motion: String, Sendable, Codable, Equatable {
    case unknown, moving, stationary
}

/// Thresholds of the motion detector (the design brief's defaults).
public struct MotionThresholds: Sendable, Equatable {
    /// Speed that counts as moving, once sustained for `movingConfirmation`.
    public var movingSpeed = 1.5
    /// Distance from the stationary anchor that counts as moving (when the receiver does not report speed 0).
    public var movingDistance = 25.0
    /// Below this speed, and within `stationaryRadius` for `stationaryDuration`, the vehicle is stationary.
    public var stationarySpeed = 0.5
    public var stationaryRadius = 15.0
    public var stationaryDuration = 60.0
    /// How long moving evidence must last before the mode flips: one fast jitter spike never does.
    public var movingConfirmation = 2.0

    public init() {}
}

/// The motion detector: a pure state machine over fixes (and an ignition signal that overrides them), with
/// hysteresis so that stationary jitter never flips the mode. Time is the fixes' own.
public struct MotionDetector: Sendable {
    public enum Action: Equatable, Sendable {
        case changed(to: Motion)
    }

    private enum State: Sendable {
        case unknown
        /// `evidenceSince`: time of the first fix of an unbroken run of moving evidence.
        case stationary(anchor: Fix, evidenceSince: Double?)
        /// `slowSince`/`slowAnchor`: the start of an unbroken slow run within the stationary radius.
        case moving(slowAnchor: Fix?, slowSince: Double?)
    }

    public let thresholds: MotionThresholds
    private var state: State = .unknown
    private var lastTime: Double?
    /// nil: no ignition input; true/false: the input overrides GPS.
    private var ignition: Bool?

    public init(thresholds: MotionThresholds = MotionThresholds()) { self.thresholds = thresholds }

    public var motion: Motion {
        if let ignition { return ignition ? .moving : .stationary }
        return gpsMotion
    }

    /// Stationary, but the latest fixes suggest movement that is not yet confirmed: a caller sampling
    /// slowly should look again soon rather than in ten seconds.
    public var isConfirmingMovement: Bool {
        if case .stationary(_, let evidenceSince) = state, evidenceSince != nil, ignition == nil { return true }
        return false
    }

    private var gpsMotion: Motion {
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

    public mutating func observe(_ fix: Fix) -> Action? {
        let before = motion
        // Time going backwards (a receiver reset, a replayed log): start the evidence windows afresh.
        if let lastTime, fix.time < lastTime { restartWindows(at: fix) }
        lastTime = fix.time
        step(fix)
        let after = motion
        return after != before ? .changed(to: after) : nil
    }

    private mutating func restartWindows(at fix: Fix) {
        switch state {
        case .unknown: break
        case .stationary: state = .stationary(anchor: fix, evidenceSince: nil)
        case .moving: state = .moving(slowAnchor: nil, slowSince: nil)
        }
    }

    private mutating func step(_ fix: Fix) {
        let speed = fix.speed
        switch state {
        case .unknown:
            if let speed, speed >= thresholds.movingSpeed {
                state = .moving(slowAnchor: nil, slowSince: nil)
            } else {
                state = .stationary(anchor: fix, evidenceSince: nil)
            }
        case .stationary(let anchor, let evidenceSince):
            if isMovingEvidence(fix, anchor: anchor) {
                let since = evidenceSince ?? fix.time
                if fix.time - since >= thresholds.movingConfirmation {
                    state = .moving(slowAnchor: nil, slowSince: nil)
                } else {
                    state = .stationary(anchor: anchor, evidenceSince: since)
                }
            } else {
                state = .stationary(anchor: anchor, evidenceSince: nil)
            }
        case .moving(let slowAnchor, let slowSince):
            let slow = (speed ?? 0) < thresholds.stationarySpeed
            guard slow, let slowAnchor, let slowSince,
                  Geo.distance(slowAnchor, fix) < thresholds.stationaryRadius
            else {
                state = .moving(slowAnchor: slow ? fix : nil, slowSince: slow ? fix.time : nil)
                return
            }
            if fix.time - slowSince >= thresholds.stationaryDuration {
                state = .stationary(anchor: fix, evidenceSince: nil)
            }
        }
    }

    /// Speed at or above the moving threshold, or a displacement past the moving distance that the receiver
    /// does not contradict by reporting that it stands still (a fix regained after a loss may land metres away).
    private func isMovingEvidence(_ fix: Fix, anchor: Fix) -> Bool {
        if let speed = fix.speed, speed >= thresholds.movingSpeed { return true }
        let displaced = Geo.distance(anchor, fix) - (fix.horizontalError ?? 0) >= thresholds.movingDistance
        return displaced && (fix.speed.map { $0 >= thresholds.stationarySpeed } ?? true)
    }
}
