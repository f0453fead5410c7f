import DispatchSimCore
import DriverDomain
import Synchronization

/// The live fault plan, its seeded randomness and the "refuse connections" window, lock-guarded (every API
/// request asks it). Also counts API requests and injected faults for `/sim/stats`.
final class FaultInjector: Sendable {
    private struct State {
        var plan: FaultPlan
        var random: SplitMix64
        var refuseUntil: Double = 0
        var requests = 0
        var bytes = 0
        var faults = 0
        var frames = 0
        var frameBytes = 0
        var byRoute: [String: Int] = [:]
    }

    private let state: Mutex<State>

    init(plan: FaultPlan, seed: UInt64) {
        state = Mutex(State(plan: plan, random: SplitMix64(seed: seed)))
    }

    var plan: FaultPlan {
        get { state.withLock { $0.plan } }
        set { state.withLock { $0.plan = newValue } }
    }

    /// What to do with a request to `path`, and the delay before it (milliseconds).
    func decide(path: String, bytes: Int) -> (decision: FaultPlan.Decision, latencyMs: Int) {
        state.withLock { state in
            guard path.hasPrefix("/api/") else { return (.pass, 0) }
            state.requests += 1
            state.bytes += bytes
            state.byRoute[SimStats.route(of: path), default: 0] += 1
            let decision = state.plan.decide(path: path, random: state.random.nextUnit())
            if decision != .pass { state.faults += 1 }
            return (decision, state.plan.latency(path: path))
        }
    }

    /// The plan's latency for a message on a rider WebSocket (its path is the socket's), milliseconds: a slow
    /// link delays each frame as it delays each request.
    func frameLatencyMs(path: String) -> Int { state.withLock { $0.plan.latency(path: path) } }

    /// Every new connection is closed at once until `now + seconds`.
    func refuse(forSeconds seconds: Double, now: Double) {
        state.withLock { $0.refuseUntil = now + seconds }
    }

    func isRefusing(now: Double) -> Bool {
        state.withLock { state in
            guard now < state.refuseUntil else { return false }
            state.faults += 1
            return true
        }
    }

    func refusingFor(now: Double) -> Double { state.withLock { max(0, $0.refuseUntil - now) } }

    var counts: (requests: Int, bytes: Int, faults: Int) { state.withLock { ($0.requests, $0.bytes, $0.faults) } }

    var requestsByRoute: [String: Int] { state.withLock { $0.byRoute } }

    /// Counts a text frame received on a rider WebSocket (on `path`, the socket's), and says whether the link loses it
    /// as it loses a request: its connection closes before the frame is handled, or after (the answer lost). An error
    /// status has no frame of its own: the frame passes.
    func frame(path: String, bytes: Int) -> FaultPlan.Decision {
        state.withLock { state in
            state.frames += 1
            state.frameBytes += bytes
            switch state.plan.decide(path: path, random: state.random.nextUnit()) {
            case .dropBefore:
                state.faults += 1
                return .dropBefore
            case .dropAfter:
                state.faults += 1
                return .dropAfter
            case .pass, .error:
                return .pass
            }
        }
    }

    var frameCounts: (frames: Int, bytes: Int) { state.withLock { ($0.frames, $0.frameBytes) } }
}
