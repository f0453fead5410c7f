import BackendContract
import DriverAPI
import DriverDomain
import GPSKit

/// Everything the GPS thread decides with: the fix-quality filter, the motion detector and the sampling policy (pure
/// state machines), the GPS counters, and what the vehicle and the power inputs last said. One value, owned by that
/// thread (`TrackingPipeline`), never locked: the other threads read the `TrackingSnapshot` it publishes.
///
/// Every fix passes the filter first: a rejected one is counted and goes no further (no ping, no position for
/// an action, no ETA input, no safety speed, no time).
struct TrackingState {
    /// What one fix led to; the pipeline does the I/O.
    struct Outcome: Sendable {
        var verdict: FixFilter.Verdict
        var decision: SamplingPolicy.Decision
        var motion: Motion
        var motionChanged: Bool
        /// Seconds of receiver time without a fix before this one, when that was a loss rather than a pause.
        var gapBefore: Double?
        var plan: SamplingPolicy.WatchPlan
        var effectiveHz: Double
        /// Movement suspected but not confirmed: keep watching instead of going quiet.
        var confirmingMovement: Bool
        /// The fix made the receiver usable again after a spell without usable fixes.
        var fixesResumed: Bool
        /// The ignition input as last read (nil: none), and what the fixes alone say of motion.
        var ignition: Bool? = nil
        var gpsMotion: Motion = .unknown
        /// Receiver seconds until the next fix is due for the interval (see `SamplingPolicy.secondsUntilDue`).
        var dueIn: Double? = nil
        /// The filter re-anchored on fixes older than the last accepted one (a receiver whose clock went back): the
        /// time the GPS gave so far is not to be trusted.
        var gpsTimeWentBack = false
    }

    /// A spell of `noFix` that began: the receiver stays connected but nothing usable arrives.
    struct Silence: Sendable, Equatable {
        var seconds: Double
        var rejected: [FixRejection: Int]
    }

    var filter: FixFilter
    var detector: MotionDetector
    var policy: SamplingPolicy
    /// Whether an ignition that is on counts as moving. A 0/1 file says nothing else, so on means moving; the
    /// vehicle's own adapter reports its speed, so an engine idling at a kerb stays parked (and sampled as parked):
    /// only off is an override then.
    let ignitionOnMeansMoving: Bool
    var link = GPSLinkState.connecting
    /// The last link state other than `connecting`, so that retries against an absent gpsd (every few seconds,
    /// for hours) are logged once, not each time.
    var settledLink: GPSLinkState?
    var fixesSeen = 0
    /// The last accepted fix and when it was handled (monotonic seconds).
    var lastFix: Fix?
    var lastFixAt: Double?
    var connectedAt: Double?
    /// No usable fix for longer than the sampling interval explains, while connected.
    var silent = false
    /// The ignition in force (nil: no input), and the engine as the vehicle's adapter last told (`ignition.source = obd`).
    var ignition: Bool?
    var vehicleIgnition: Bool?
    /// The vehicle's battery is protected: the receiver stays released, whatever the fixes say.
    var receiverReleased = false
    /// When the power inputs were last read (monotonic seconds).
    var lastPowerRead: Double
    var requests: [UInt64: RateRequest] = [:]
    var fixLosses = 0
    var recentSpeed = RecentSpeed()

    init(
        rates: SamplingRates, thresholds: MotionThresholds = MotionThresholds(), limits: FixQualityLimits = FixQualityLimits(),
        ignitionOnMeansMoving: Bool = true, now: Double
    ) {
        filter = FixFilter(limits: limits)
        detector = MotionDetector(thresholds: thresholds)
        policy = SamplingPolicy(rates: rates)
        self.ignitionOnMeansMoving = ignitionOnMeansMoving
        lastPowerRead = now
    }

    /// `reference`: the best time the unit has (GPS carried forward, or the system clock), to judge a rollover by.
    mutating func observe(_ fix: Fix, now: Double, reference: Double) -> Outcome {
        fixesSeen += 1
        let verdict = filter.evaluate(fix, reference: reference)
        switch verdict {
        case .accept, .reanchor: return accepted(fix, verdict: verdict, now: now)
        case .duplicate, .reject: break
        }
        return Outcome(
            verdict: verdict, decision: .skip, motion: detector.motion, motionChanged: false, gapBefore: nil,
            plan: policy.watchPlan, effectiveHz: policy.effectiveHz, confirmingMovement: detector.isConfirmingMovement,
            fixesResumed: false)
    }

    private mutating func accepted(_ fix: Fix, verdict: FixFilter.Verdict, now: Double) -> Outcome {
        // gpsd sends nothing while a receiver has lost the sky (RMC status V), so a loss shows as a gap in
        // receiver time longer than the sampling interval allows.
        var gap: Double? = nil
        if let previous = lastFix?.time, fix.time - previous > max(3, 1 / policy.effectiveHz + 2) {
            gap = fix.time - previous
            fixLosses += 1
        }
        let wentBack = verdict == .reanchor && lastFix.map { fix.time < $0.time } == true
        let resumed = silent
        silent = false
        lastFix = fix
        lastFixAt = now
        recentSpeed.observe(time: fix.time, speed: fix.speed)
        let changed = detector.observe(fix)
        if case .changed(let motion) = changed { policy.motionChanged(to: motion) }
        let decision = policy.decide(fix)
        return Outcome(
            verdict: verdict, decision: decision, motion: detector.motion, motionChanged: changed != nil, gapBefore: gap,
            plan: policy.watchPlan, effectiveHz: policy.effectiveHz,
            confirmingMovement: detector.isConfirmingMovement, fixesResumed: resumed, ignition: ignition,
            gpsMotion: detector.gpsMotion, dueIn: policy.secondsUntilDue(after: fix), gpsTimeWentBack: wentBack)
    }

    /// gpsd reported `count` times that the receiver has no fix.
    mutating func noFixReports(_ count: Int) {
        for _ in 0..<count { filter.noFixReport() }
    }

    /// How long gpsd may go without a usable fix, while connected, before the receiver counts as `noFix`:
    /// longer than the sampling interval (a quiet watch between slow samples) and a few seconds of slack.
    var allowedSilence: Double { 1 / policy.effectiveHz + 5 }

    /// Checks for a receiver that stays connected but sends nothing usable (no fixes, or one stale fix over
    /// and over). Returns the spell when it just began (to be logged once), and the seconds until the next
    /// check is due (nil: none, not connected).
    mutating func checkSilence(now: Double) -> (began: Silence?, recheckIn: Double?) {
        guard link == .connected || link == .noFix, let since = lastFixAt ?? connectedAt else { return (nil, nil) }
        let quiet = now - since
        guard quiet > allowedSilence else { return (nil, allowedSilence - quiet + 0.05) }
        guard !silent else { return (nil, nil) }
        silent = true
        return (Silence(seconds: quiet, rejected: filter.rejected), nil)
    }

    /// Returns whether the link differs from the last settled one (`connecting` never does): a change to log.
    mutating func setLink(_ state: GPSLinkState, now: Double) -> Bool {
        if state == .connected, link != .connected, link != .noFix { connectedAt = now }
        if state == .lost || state == .connecting { silent = false }
        link = state
        guard state != .connecting, settledLink != state else { return false }
        settledLink = state
        return true
    }

    /// The vehicle's speed from its adapter (nil: it stopped answering): evidence of motion while the receiver has
    /// no usable fix. Returns the motion when it changed.
    mutating func vehicleSpeed(_ speed: Double?, now: Double) -> Motion? {
        let usable = TrackingSnapshot.effectiveLink(link, silent: silent, lastFixAt: lastFixAt, allowedSilence: allowedSilence, now: now) == .connected
        guard case .changed(let motion) = detector.vehicleSpeed(speed, at: now, gnssUsable: usable) else { return nil }
        policy.motionChanged(to: motion)
        return motion
    }

    /// The engine as the vehicle's adapter tells (nil: unknown); returns whether it changed.
    mutating func vehicleEngine(running: Bool?) -> Bool {
        defer { vehicleIgnition = running }
        return vehicleIgnition != running
    }

    /// Applies the power inputs; returns the new plan when something changed.
    mutating func setPower(saver: Bool, ignition: Bool?, now: Double) -> SamplingPolicy.WatchPlan? {
        lastPowerRead = now
        let before = (policy.batterySaver, self.ignition)
        self.ignition = ignition
        let override = ignition == true && !ignitionOnMeansMoving ? nil : ignition
        if case .changed(let motion) = detector.ignition(override) { policy.motionChanged(to: motion) }
        policy.setBatterySaver(saver)
        return before == (saver, ignition) ? nil : policy.watchPlan
    }

    /// Sets or withdraws (hz 0) a connection's rate request; returns the rate in force.
    mutating func setRequest(_ request: RateRequest) -> Double {
        if request.hz > 0 { requests[request.connection] = request } else { requests[request.connection] = nil }
        policy.setRequestedHz(requests.values.map(\.hz).max() ?? 0)
        return policy.effectiveHz
    }

    /// What the other threads may read, as of now.
    var snapshot: TrackingSnapshot {
        TrackingSnapshot(
            link: link, silent: silent, allowedSilence: allowedSilence, lastFix: lastFix, lastFixAt: lastFixAt,
            recentSpeed: recentSpeed.average, motion: detector.motion, movement: detector.movement,
            effectiveHz: policy.effectiveHz, policyHz: policy.policyHz, batterySaver: policy.batterySaver, watchPlan: policy.watchPlan,
            ignition: ignition, requests: requests.values.sorted { $0.connection < $1.connection },
            fixesSeen: fixesSeen, fixLosses: fixLosses, fixesAccepted: filter.accepted, fixesRejected: filter.rejected, reanchors: filter.reanchors)
    }
}

/// What tracking decided, as the GPS thread last published it: a value, read by any thread.
struct TrackingSnapshot: Sendable {
    var link = GPSLinkState.connecting
    var silent = false
    var allowedSilence = 0.0
    var lastFix: Fix?
    var lastFixAt: Double?
    var recentSpeed: Double?
    var motion = Motion.unknown
    var movement = Motion.unknown
    var effectiveHz = 0.0
    var policyHz = 0.0
    var batterySaver = false
    var watchPlan = SamplingPolicy.WatchPlan.continuous
    var ignition: Bool?
    var requests: [RateRequest] = []
    var fixesSeen = 0
    var fixLosses = 0
    var fixesAccepted = 0
    var fixesRejected: [FixRejection: Int] = [:]
    var reanchors = 0

    /// The link as front ends see it: connected but silent (a spell that began, or no accepted fix for longer than
    /// the rate explains) is `noFix`.
    func effectiveLink(now: Double) -> GPSLinkState {
        Self.effectiveLink(link, silent: silent, lastFixAt: lastFixAt, allowedSilence: allowedSilence, now: now)
    }

    /// The rule itself, for the GPS thread's own state too (a vehicle's speed counts only while the sky is not usable).
    static func effectiveLink(_ link: GPSLinkState, silent: Bool, lastFixAt: Double?, allowedSilence: Double, now: Double) -> GPSLinkState {
        guard link == .connected else { return link }
        let quiet = lastFixAt.map { now - $0 } ?? 0
        return silent || quiet > allowedSilence ? .noFix : .connected
    }

    /// The latest accepted fix if it is at most `maxAge` seconds old.
    func fix(now: Double, maxAge: Double) -> Fix? {
        lastFixAt.map { now - $0 <= maxAge } == true ? lastFix : nil
    }

    /// The uplink's cadence: moving, or parked, saving the battery (the ignition off, a low battery) or not.
    var uplinkCadence: UplinkStateMachine.Cadence { motion == .moving ? .moving : batterySaver ? .saver : .stationary }
}
