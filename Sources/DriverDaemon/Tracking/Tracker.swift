import BackendContract
import DriverAPI
import DriverDomain
import Synchronization

/// Tracking as every thread but the GPS thread sees it: the snapshot that thread publishes after each decision
/// (one lock, held for a copy), and the daemon's clock. Nothing here decides; `TrackingPipeline` does.
final class Tracker: Sendable {
    let clock: DaemonClock
    private let published = Mutex(TrackingSnapshot())

    init(clock: DaemonClock) { self.clock = clock }

    /// The GPS thread's: what it decided, for the others to read.
    func publish(_ snapshot: TrackingSnapshot) { published.withLock { $0 = snapshot } }

    var snapshot: TrackingSnapshot { published.withLock { $0 } }

    /// The latest accepted fix if it is at most `maxAge` seconds old (a driver action carries it; an ETA starts
    /// from it), and the average speed of the last minutes of driving.
    func currentPosition(maxAge: Double = 60) -> (fix: Fix?, recentSpeed: Double?) {
        let snapshot = snapshot
        return (snapshot.fix(now: clock.monotonic, maxAge: maxAge), snapshot.recentSpeed)
    }

    /// The link as front ends see it: connected but without a usable fix for too long is `noFix`.
    var link: GPSLinkState { snapshot.effectiveLink(now: clock.monotonic) }

    /// What the uplink sends instead of pings while the receiver has no usable fix (nil while it has one).
    func heartbeat() -> UnitHeartbeat? {
        let snapshot = snapshot
        let link = snapshot.effectiveLink(now: clock.monotonic)
        guard link == .noFix || link == .lost else { return nil }
        let stamp = clock.now()
        return UnitHeartbeat(timestamp: stamp.time, timeSource: stamp.source, gps: link.rawValue, lastFixTime: snapshot.lastFix?.time)
    }

    /// Whether the vehicle itself moves (fixes, or its speed without them), and the sampling interval.
    var movement: (motion: Motion, interval: Double) {
        let snapshot = snapshot
        return (snapshot.movement, 1 / snapshot.effectiveHz)
    }

    /// The ignition in force (nil: no input).
    var ignition: Bool? { snapshot.ignition }

    var uplinkCadence: UplinkStateMachine.Cadence { snapshot.uplinkCadence }

    func gpsStatus(endpoint: String, tracking: Bool, recorder: PingRecorderCounters) -> GPSStatus {
        let snapshot = snapshot, now = clock.monotonic
        return GPSStatus(
            gpsd: endpoint, link: snapshot.effectiveLink(now: now), tracking: tracking,
            fixesSeen: snapshot.fixesSeen,
            pingsRecorded: recorder.committed, pingsByMotion: recorder.byMotion, pingsPending: recorder.pending,
            lastFix: snapshot.lastFix, lastFixAge: snapshot.lastFixAt.map { now - $0 }, motion: snapshot.motion,
            fixLosses: snapshot.fixLosses, lastError: recorder.lastError,
            fixesAccepted: snapshot.fixesAccepted,
            fixesRejected: Dictionary(uniqueKeysWithValues: snapshot.fixesRejected.map { ($0.key.rawValue, $0.value) }),
            reanchors: snapshot.reanchors)
    }

    func samplingStatus() -> SamplingStatus {
        let snapshot = snapshot
        let watch: GPSWatch = switch snapshot.watchPlan {
        case .continuous: .continuous
        case .periodic(_, let release): release ? .released : .periodic
        }
        return SamplingStatus(
            samplingHz: snapshot.effectiveHz, policyHz: snapshot.policyHz,
            batteryMode: snapshot.batterySaver ? .saver : .normal, watch: watch,
            ignition: snapshot.ignition.map { $0 ? .on : .off }, requests: snapshot.requests)
    }

    var summary: (link: GPSLinkState, motion: Motion, hz: Double) {
        let snapshot = snapshot
        return (snapshot.effectiveLink(now: clock.monotonic), snapshot.motion, snapshot.effectiveHz)
    }
}

/// The recorder's counters, read together for a status answer.
struct PingRecorderCounters {
    var committed: Int
    var byMotion: [String: Int]
    var pending: Int
    var lastError: String?
}
