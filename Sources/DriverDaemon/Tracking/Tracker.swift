import BackendContract
import DriverAPI
import DriverDomain
import GPSKit
import Synchronization

/// Owns the fix-quality filter, the motion detector and the sampling policy (pure state machines) and the GPS
/// counters, behind a lock: it runs for every fix, so it is a lock-guarded class, and it never does I/O while
/// holding the lock.
///
/// Every fix passes the filter first: a rejected one is counted and goes no further (no ping, no position for
/// an action, no ETA input, no safety speed, no time).
final class Tracker: Sendable {
    /// What one fix led to; the caller does the I/O.
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
    }

    /// A spell of `noFix` that began: the receiver stays connected but nothing usable arrives.
    struct Silence: Sendable, Equatable {
        var seconds: Double
        var rejected: [FixRejection: Int]
    }

    private struct State {
        var filter: FixFilter
        var detector: MotionDetector
        var policy: SamplingPolicy
        var link = GPSLinkState.connecting
        var fixesSeen = 0
        /// The last accepted fix and when it was handled (monotonic seconds).
        var lastFix: Fix?
        var lastFixAt: Double?
        var connectedAt: Double?
        /// No usable fix for longer than the sampling interval explains, while connected.
        var silent = false
        var ignition: Bool?
        var requests: [UInt64: RateRequest] = [:]
        var fixLosses = 0
        var recentSpeed = RecentSpeed()
    }

    private let state: Mutex<State>
    let clock: DaemonClock
    /// Whether an ignition that is on counts as moving. A 0/1 file says nothing else, so on means moving; the
    /// vehicle's own adapter reports its speed, so an engine idling at a kerb stays parked (and sampled as parked):
    /// only off is an override then.
    let ignitionOnMeansMoving: Bool

    init(
        rates: SamplingRates, thresholds: MotionThresholds = MotionThresholds(), limits: FixQualityLimits = FixQualityLimits(), clock: DaemonClock,
        ignitionOnMeansMoving: Bool = true
    ) {
        self.clock = clock
        self.ignitionOnMeansMoving = ignitionOnMeansMoving
        state = Mutex(State(filter: FixFilter(limits: limits), detector: MotionDetector(thresholds: thresholds), policy: SamplingPolicy(rates: rates)))
    }

    func observe(_ fix: Fix) -> Outcome {
        // A rollover is judged against the best time the unit has (GPS carried forward, or the system clock).
        let reference = clock.now().time
        let now = clock.monotonic
        return state.withLock { state in
            state.fixesSeen += 1
            let verdict = state.filter.evaluate(fix, reference: reference)
            switch verdict {
            case .accept, .reanchor: return accepted(fix, verdict: verdict, now: now, &state)
            case .duplicate, .reject: break
            }
            return Outcome(
                verdict: verdict, decision: .skip, motion: state.detector.motion, motionChanged: false, gapBefore: nil,
                plan: state.policy.watchPlan, effectiveHz: state.policy.effectiveHz, confirmingMovement: state.detector.isConfirmingMovement,
                fixesResumed: false)
        }
    }

    private func accepted(_ fix: Fix, verdict: FixFilter.Verdict, now: Double, _ state: inout State) -> Outcome {
        // gpsd sends nothing while a receiver has lost the sky (RMC status V), so a loss shows as a gap in
        // receiver time longer than the sampling interval allows.
        var gap: Double? = nil
        if let previous = state.lastFix?.time, fix.time - previous > max(3, 1 / state.policy.effectiveHz + 2) {
            gap = fix.time - previous
            state.fixLosses += 1
        }
        if verdict == .reanchor, let previous = state.lastFix, fix.time < previous.time { clock.forgetGPS() }
        clock.observeFix(time: fix.time)
        let resumed = state.silent
        state.silent = false
        state.lastFix = fix
        state.lastFixAt = now
        state.recentSpeed.observe(time: fix.time, speed: fix.speed)
        let changed = state.detector.observe(fix)
        if case .changed(let motion) = changed { state.policy.motionChanged(to: motion) }
        let decision = state.policy.decide(fix)
        return Outcome(
            verdict: verdict, decision: decision, motion: state.detector.motion, motionChanged: changed != nil, gapBefore: gap,
            plan: state.policy.watchPlan, effectiveHz: state.policy.effectiveHz,
            confirmingMovement: state.detector.isConfirmingMovement, fixesResumed: resumed, ignition: state.ignition,
            gpsMotion: state.detector.gpsMotion, dueIn: state.policy.secondsUntilDue(after: fix))
    }

    /// gpsd reported `count` times that the receiver has no fix.
    func noFixReports(_ count: Int) {
        state.withLock { state in for _ in 0..<count { state.filter.noFixReport() } }
    }

    /// How long gpsd may go without a usable fix, while connected, before the receiver counts as `noFix`:
    /// longer than the sampling interval (a quiet watch between slow samples) and a few seconds of slack.
    private static func allowedSilence(_ state: State) -> Double { 1 / state.policy.effectiveHz + 5 }

    /// Checks for a receiver that stays connected but sends nothing usable (no fixes, or one stale fix over
    /// and over). Returns the spell when it just began (to be logged once), and the seconds until the next
    /// check is due (nil: none, not connected).
    func checkSilence() -> (began: Silence?, recheckIn: Double?) {
        let now = clock.monotonic
        return state.withLock { state in
            guard state.link == .connected || state.link == .noFix, let since = state.lastFixAt ?? state.connectedAt else { return (nil, nil) }
            let allowed = Self.allowedSilence(state)
            let quiet = now - since
            guard quiet > allowed else { return (nil, allowed - quiet + 0.05) }
            guard !state.silent else { return (nil, nil) }
            state.silent = true
            return (Silence(seconds: quiet, rejected: state.filter.rejected), nil)
        }
    }

    /// The latest accepted fix if it is at most `maxAge` seconds old (a driver action carries it; an ETA starts
    /// from it), and the average speed of the last minutes of driving.
    func currentPosition(maxAge: Double = 60) -> (fix: Fix?, recentSpeed: Double?) {
        let now = clock.monotonic
        return state.withLock { state in
            let fresh = state.lastFixAt.map { now - $0 <= maxAge } ?? false
            return (fresh ? state.lastFix : nil, state.recentSpeed.average)
        }
    }

    func setLink(_ link: GPSLinkState) {
        let now = clock.monotonic
        state.withLock { state in
            if link == .connected, state.link != .connected, state.link != .noFix { state.connectedAt = now }
            if link == .lost || link == .connecting { state.silent = false }
            state.link = link
        }
    }

    /// The link as front ends see it: connected but without a usable fix for too long is `noFix`.
    var link: GPSLinkState {
        let now = clock.monotonic
        return state.withLock { Self.effectiveLink($0, now: now) }
    }

    /// What the uplink sends instead of pings while the receiver has no usable fix (nil while it has one).
    func heartbeat() -> UnitHeartbeat? {
        let now = clock.monotonic
        let (link, lastFixTime) = state.withLock { (Self.effectiveLink($0, now: now), $0.lastFix?.time) }
        guard link == .noFix || link == .lost else { return nil }
        let stamp = clock.now()
        return UnitHeartbeat(timestamp: stamp.time, timeSource: stamp.source, gps: link.rawValue, lastFixTime: lastFixTime)
    }

    /// Connected but silent (a spell that began, or no accepted fix for longer than the rate explains) is noFix.
    private static func effectiveLink(_ state: State, now: Double) -> GPSLinkState {
        guard state.link == .connected else { return state.link }
        let quiet = state.lastFixAt.map { now - $0 } ?? 0
        return state.silent || quiet > allowedSilence(state) ? .noFix : .connected
    }

    /// The vehicle's speed from its adapter (nil: it stopped answering): evidence of motion while the receiver has
    /// no usable fix. Returns the motion when it changed.
    func vehicleSpeed(_ speed: Double?) -> Motion? {
        let now = clock.monotonic
        return state.withLock { state in
            let usable = Self.effectiveLink(state, now: now) == .connected
            var changed: Motion? = nil
            if case .changed(let motion) = state.detector.vehicleSpeed(speed, at: now, gnssUsable: usable) {
                state.policy.motionChanged(to: motion)
                changed = motion
            }
            return changed
        }
    }

    /// Whether the vehicle itself moves (fixes, or its speed without them), and the sampling interval.
    var movement: (motion: Motion, interval: Double) { state.withLock { ($0.detector.movement, 1 / $0.policy.effectiveHz) } }

    /// The ignition in force (nil: no input).
    var ignition: Bool? { state.withLock { $0.ignition } }

    /// Applies the power inputs; returns the new plan when something changed.
    func setPower(saver: Bool, ignition: Bool?) -> SamplingPolicy.WatchPlan? {
        state.withLock { state in
            let before = (state.policy.batterySaver, state.ignition)
            state.ignition = ignition
            let override = ignition == true && !ignitionOnMeansMoving ? nil : ignition
            if case .changed(let motion) = state.detector.ignition(override) { state.policy.motionChanged(to: motion) }
            state.policy.setBatterySaver(saver)
            return before == (saver, ignition) ? nil : state.policy.watchPlan
        }
    }

    /// Sets or withdraws (hz 0) a connection's rate request; returns the rate in force.
    func setRequest(_ request: RateRequest) -> Double {
        state.withLock { state in
            if request.hz > 0 { state.requests[request.connection] = request } else { state.requests[request.connection] = nil }
            state.policy.setRequestedHz(state.requests.values.map(\.hz).max() ?? 0)
            return state.policy.effectiveHz
        }
    }

    var plan: SamplingPolicy.WatchPlan { state.withLock { $0.policy.watchPlan } }

    func gpsStatus(endpoint: String, tracking: Bool, recorder: PingRecorderCounters) -> GPSStatus {
        let now = clock.monotonic
        return state.withLock { state in
            let age = state.lastFixAt.map { now - $0 }
            let link = Self.effectiveLink(state, now: now)
            return GPSStatus(
                gpsd: endpoint, link: link, tracking: tracking,
                fixesSeen: state.fixesSeen,
                pingsRecorded: recorder.committed, pingsByMotion: recorder.byMotion, pingsPending: recorder.pending,
                lastFix: state.lastFix, lastFixAge: age, motion: state.detector.motion,
                fixLosses: state.fixLosses, lastError: recorder.lastError,
                fixesAccepted: state.filter.accepted,
                fixesRejected: Dictionary(uniqueKeysWithValues: state.filter.rejected.map { ($0.key.rawValue, $0.value) }),
                reanchors: state.filter.reanchors)
        }
    }

    func samplingStatus() -> SamplingStatus {
        state.withLock { state in
            let watch: GPSWatch = switch state.policy.watchPlan {
            case .continuous: .continuous
            case .periodic(_, let release): release ? .released : .periodic
            }
            return SamplingStatus(
                samplingHz: state.policy.effectiveHz, policyHz: state.policy.policyHz,
                batteryMode: state.policy.batterySaver ? .saver : .normal, watch: watch,
                ignition: state.ignition.map { $0 ? .on : .off },
                requests: state.requests.values.sorted { $0.connection < $1.connection })
        }
    }

    /// The uplink's cadence: moving, or parked, saving the battery (the ignition off, a low battery) or not.
    var uplinkCadence: UplinkStateMachine.Cadence {
        state.withLock { $0.detector.motion == .moving ? .moving : $0.policy.batterySaver ? .saver : .stationary }
    }

    var summary: (link: GPSLinkState, motion: Motion, hz: Double) {
        let now = clock.monotonic
        return state.withLock { (Self.effectiveLink($0, now: now), $0.detector.motion, $0.policy.effectiveHz) }
    }
}

/// The recorder's counters, read together for a status answer.
struct PingRecorderCounters {
    var committed: Int
    var byMotion: [String: Int]
    var pending: Int
    var lastError: String?
}
