import DriverAPI
import DriverDomain
import GPSKit
import Synchronization

/// Owns the motion detector and the sampling policy (pure state machines) and the GPS counters, behind a
/// lock: it runs for every fix, so it is a lock-guarded class, and it never does I/O while holding the lock.
final class Tracker: Sendable {
    /// What one fix led to; the caller does the I/O.
    struct Outcome: Sendable {
        var decision: SamplingPolicy.Decision
        var motion: Motion
        var motionChanged: Bool
        /// Seconds of receiver time without a fix before this one, when that was a loss rather than a pause.
        var gapBefore: Double?
        var plan: SamplingPolicy.WatchPlan
        var effectiveHz: Double
        /// Movement suspected but not confirmed: keep watching instead of going quiet.
        var confirmingMovement: Bool
    }

    private struct State {
        var detector: MotionDetector
        var policy: SamplingPolicy
        var link = GPSLinkState.connecting
        var fixesSeen = 0
        var lastFix: Fix?
        var lastFixAt: ContinuousClock.Instant?
        var ignition: Bool?
        var requests: [UInt64: RateRequest] = [:]
        var fixLosses = 0
        var recentSpeed = RecentSpeed()
    }

    private let state: Mutex<State>

    init(rates: SamplingRates, thresholds: MotionThresholds = MotionThresholds()) {
        state = Mutex(State(detector: MotionDetector(thresholds: thresholds), policy: SamplingPolicy(rates: rates)))
    }

    func observe(_ fix: Fix) -> Outcome {
        state.withLock { state in
            state.fixesSeen += 1
            // gpsd sends nothing while a receiver has lost the sky (RMC status V), so a loss shows as a gap in
            // receiver time longer than the sampling interval allows.
            var gap: Double? = nil
            if let previous = state.lastFix?.time, fix.time - previous > max(3, 1 / state.policy.effectiveHz + 2) {
                gap = fix.time - previous
                state.fixLosses += 1
            }
            state.lastFix = fix
            state.lastFixAt = .now
            state.recentSpeed.observe(time: fix.time, speed: fix.speed)
            let changed = state.detector.observe(fix)
            if case .changed(let motion) = changed { state.policy.motionChanged(to: motion) }
            let decision = state.policy.decide(fix)
            return Outcome(
                decision: decision, motion: state.detector.motion, motionChanged: changed != nil, gapBefore: gap,
                plan: state.policy.watchPlan, effectiveHz: state.policy.effectiveHz,
                confirmingMovement: state.detector.isConfirmingMovement)
        }
    }

    /// The latest fix if it is at most `maxAge` seconds old (a driver action carries it; an ETA starts
    /// from it), and the average speed of the last minutes of driving.
    func currentPosition(maxAge: Double = 60) -> (fix: Fix?, recentSpeed: Double?) {
        state.withLock { state in
            let fresh = state.lastFixAt.map { Self.seconds(.now - $0) <= maxAge } ?? false
            return (fresh ? state.lastFix : nil, state.recentSpeed.average)
        }
    }

    func setLink(_ link: GPSLinkState) { state.withLock { $0.link = link } }

    /// Applies the power inputs; returns the new plan when something changed.
    func setPower(saver: Bool, ignition: Bool?) -> SamplingPolicy.WatchPlan? {
        state.withLock { state in
            let before = (state.policy.batterySaver, state.ignition)
            state.ignition = ignition
            if case .changed(let motion) = state.detector.ignition(ignition) { state.policy.motionChanged(to: motion) }
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
        state.withLock { state in
            let age = state.lastFixAt.map { Self.seconds(ContinuousClock.now - $0) }
            // Connected but silent for longer than the rate explains: the receiver has no fix.
            let stale = state.link == .connected && (age ?? 0) > 1 / state.policy.effectiveHz + 5
            return GPSStatus(
                gpsd: endpoint, link: stale ? GPSLinkState.noFix.rawValue : state.link.rawValue, tracking: tracking,
                fixesSeen: state.fixesSeen,
                pingsRecorded: recorder.committed, pingsByMotion: recorder.byMotion, pingsPending: recorder.pending,
                lastFix: state.lastFix, lastFixAge: age, motion: state.detector.motion.rawValue,
                fixLosses: state.fixLosses, lastError: recorder.lastError)
        }
    }

    func samplingStatus() -> SamplingStatus {
        state.withLock { state in
            let watch = switch state.policy.watchPlan {
            case .continuous: "continuous"
            case .periodic(_, let release): release ? "released" : "periodic"
            }
            return SamplingStatus(
                samplingHz: state.policy.effectiveHz, policyHz: state.policy.policyHz,
                batteryMode: state.policy.batterySaver ? "saver" : "normal", watch: watch,
                ignition: state.ignition.map { $0 ? "on" : "off" },
                requests: state.requests.values.sorted { $0.connection < $1.connection })
        }
    }

    var summary: (link: String, motion: String, hz: Double) {
        state.withLock { ($0.link.rawValue, $0.detector.motion.rawValue, $0.policy.effectiveHz) }
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// The recorder's counters, read together for a status answer.
struct PingRecorderCounters {
    var committed: Int
    var byMotion: [String: Int]
    var pending: Int
    var lastError: String?
}
