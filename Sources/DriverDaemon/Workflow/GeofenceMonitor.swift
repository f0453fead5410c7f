import DriverAPI
import DriverDomain
import Synchronization

/// Runs the geofence watch (pure) on every accepted fix, on the GPS reader's thread: a lock-guarded class, as it
/// runs per fix. It does no I/O; what it decides goes to the workflow through a stream its service consumes.
final class GeofenceMonitor: Sendable {
    private struct State {
        var watch: GeofenceWatch
        var targets: [GeofenceWatch.Target] = []
    }

    let mode: ArrivalMode
    let defaultRadius: Double
    /// Fixed at start: read without the lock.
    private let settings: GeofenceWatch.Settings
    private let state: Mutex<State>
    let actions: AsyncStream<[GeofenceWatch.Action]>
    private let continuation: AsyncStream<[GeofenceWatch.Action]>.Continuation

    init(mode: ArrivalMode, defaultRadius: Double, dwellSeconds: Double) {
        self.mode = mode
        self.defaultRadius = defaultRadius
        settings = GeofenceWatch.Settings(dwellSeconds: dwellSeconds)
        state = Mutex(State(watch: GeofenceWatch(settings: settings)))
        (actions, continuation) = AsyncStream.makeStream(of: [GeofenceWatch.Action].self)
    }

    var isEnabled: Bool { mode != .off }

    /// The stops to watch now (the workflow sets them whenever its tasks or visits change).
    func setTargets(_ targets: [GeofenceWatch.Target]) {
        state.withLock { $0.targets = targets }
    }

    /// An accepted fix: arrivals and departures go to the workflow; nothing happens without targets.
    func observe(_ fix: Fix, motion: Motion) {
        guard isEnabled else { return }
        let actions = state.withLock { state -> [GeofenceWatch.Action] in
            guard !state.targets.isEmpty else { return [] }
            return state.watch.observe(.init(fix), motion: motion, targets: state.targets)
        }
        if !actions.isEmpty { continuation.yield(actions) }
    }

    /// The exit border of a stop for a fix with this error.
    func exitBorder(radius: Double?, horizontalError: Double?) -> Double {
        settings.exitBorder(radius ?? defaultRadius, horizontalError: horizontalError)
    }

    func finish() { continuation.finish() }
}
