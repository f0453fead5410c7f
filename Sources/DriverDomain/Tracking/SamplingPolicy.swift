import DriverAPI
/// Recording rates, in hertz (the design brief's defaults).
public struct SamplingRates: Sendable, Equatable {
    public var moving = 1.0
    public var stationary = 0.1
    /// Battery-saver rates (on battery at or below the threshold, or ignition off).
    public var saverMoving = 0.2
    public var saverStationary = 1.0 / 60
    /// Heading change that forces a sample at speed, so corners survive low rates.
    public var headingChange = 15.0
    public var headingMinimumSpeed = 3.0

    public init() {}
}

/// Which fixes become pings: a pure state machine over fixes, motion changes, battery mode and live rate
/// requests. Time is the fixes' own.
public struct SamplingPolicy: Sendable {
    public enum Reason: String, Sendable, Equatable, Codable {
        case first, interval, motionChanged, heading, clockJump
    }

    public enum Decision: Equatable, Sendable {
        case record(Reason)
        case skip
    }

    /// How the GPS reader should watch gpsd at the current rate.
    public enum WatchPlan: Equatable, Sendable {
        /// Stream every fix (rates of about 0.5 Hz and above).
        case continuous
        /// Ask for one fix every `interval` seconds; `release` lets gpsd power the receiver down in between.
        case periodic(interval: Double, release: Bool)
    }

    public let rates: SamplingRates
    public private(set) var motion: Motion = .unknown
    public private(set) var batterySaver = false
    /// The highest live rate request, in hertz (0: none).
    public private(set) var requestedHz = 0.0
    private var lastRecorded: Fix?
    private var pendingMotionChange = false

    public init(rates: SamplingRates = SamplingRates()) { self.rates = rates }

    /// The policy's own rate for the current motion and battery mode.
    public var policyHz: Double {
        switch (motion, batterySaver) {
        case (.moving, false), (.unknown, false): rates.moving
        case (.stationary, false): rates.stationary
        case (.moving, true), (.unknown, true): rates.saverMoving
        case (.stationary, true): rates.saverStationary
        }
    }

    /// The rate in force: the policy's or the highest live request, whichever is higher; in battery-saver
    /// mode requests cannot raise it past the saver moving rate.
    public var effectiveHz: Double {
        let requested = batterySaver ? min(requestedHz, rates.saverMoving) : requestedHz
        return max(policyHz, requested)
    }

    public var watchPlan: WatchPlan {
        let hz = effectiveHz
        if hz >= 0.5 { return .continuous }
        return .periodic(interval: 1 / hz, release: batterySaver && motion != .moving)
    }

    public mutating func motionChanged(to motion: Motion) {
        guard motion != self.motion else { return }
        self.motion = motion
        pendingMotionChange = true
    }

    public mutating func setBatterySaver(_ on: Bool) { batterySaver = on }

    public mutating func setRequestedHz(_ hz: Double) { requestedHz = max(0, hz) }

    /// Receiver seconds from `fix` until a fix is due for the interval (0 when one is due now; nil before the
    /// first). A reader that sleeps this long after `fix` arrived reads the due epoch with one wake-up.
    public func secondsUntilDue(after fix: Fix) -> Double? {
        lastRecorded.map { max(0, $0.time + 1 / effectiveHz - 0.05 - fix.time) }
    }

    public mutating func decide(_ fix: Fix) -> Decision {
        guard let last = lastRecorded else { return record(fix, .first) }
        if fix.time == last.time { return .skip }  // a duplicate epoch
        if fix.time < last.time { return record(fix, .clockJump) }
        if pendingMotionChange { return record(fix, .motionChanged) }
        // A small tolerance: receivers stamp epochs a few milliseconds early or late.
        if fix.time - last.time >= 1 / effectiveHz - 0.05 { return record(fix, .interval) }
        if let speed = fix.speed, speed > rates.headingMinimumSpeed,
           let track = fix.track, let lastTrack = last.track,
           Geo.headingDifference(track, lastTrack) >= rates.headingChange {
            return record(fix, .heading)
        }
        return .skip
    }

    private mutating func record(_ fix: Fix, _ reason: Reason) -> Decision {
        lastRecorded = fix
        pendingMotionChange = false
        return .record(reason)
    }
}
