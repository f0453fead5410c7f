import DriverAPI
import DriverDomain
import DriverStore
import GPSKit
import JSONRPC
import Logging
import Synchronization

/// The `gps.*` methods' owner: the tracking pipeline's parts they read and steer.
struct TrackingRuntime: MethodOwner, Sendable {
    static let maxRequestHz = 10.0

    let tracker: Tracker
    let recorder: PingRecorder?
    /// nil: fixes are handed to the pipeline by the caller (`DaemonAssembly.FixSource.handedIn`).
    let reader: GPSDReader?
    let pipeline: TrackingPipeline
    let logger: Logger

    func gpsStatus() -> GPSStatus {
        tracker.gpsStatus(
            endpoint: reader?.endpoint.description ?? "none (fixes handed in)", tracking: recorder != nil,
            recorder: PingRecorderCounters(
                committed: recorder?.kept ?? 0, byMotion: recorder?.keptByMotion ?? [:],
                pending: recorder?.pendingCount ?? 0, lastError: recorder?.lastError))
    }
}

extension TrackingRuntime {
    func register(in router: inout RPCRouter) {
        let runtime = self
        router.register(Methods.gpsStatus) { _, _ in runtime.gpsStatus() }
        router.register(Methods.gpsFix) { _, _ in
            guard let fix = runtime.gpsStatus().lastFix else { throw APIError.unavailable("no fix yet") }
            return fix
        }
        // The connections whose close withdraws their request (the socket's bookkeeping, not the GPS thread's).
        let watched = Mutex<Set<UInt64>>([])
        router.register(Methods.gpsRequestRate) { params, connection in
            guard params.hz.isFinite, (0...Self.maxRequestHz).contains(params.hz) else {
                throw APIError.invalidParams("hz must be from 0 (withdraw) to \(Self.maxRequestHz)")
            }
            let request = RateRequest(connection: connection.id, pid: connection.peer.pid, uid: connection.peer.uid, hz: params.hz)
            // The request dies with its connection.
            if watched.withLock({ $0.insert(connection.id).inserted }) {
                connection.onClose {
                    _ = watched.withLock { $0.remove(connection.id) }
                    runtime.pipeline.submit(.rateRequest(RateRequest(connection: connection.id, pid: 0, uid: 0, hz: 0), answer: nil))
                }
            }
            let effective = await runtime.pipeline.requestRate(request)
            logger.info(
                "rate request \(params.hz) Hz from pid \(connection.peer.pid); effective \(effective) Hz",
                metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.rateRequest.rawValue)"])
            return RequestRateResult(requestedHz: params.hz, effectiveHz: effective)
        }
    }
}
