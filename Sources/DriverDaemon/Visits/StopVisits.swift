import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials
import JSONRPC
import Logging
import Synchronization

/// Visits to stops, from the arrival to the departure: arrivals the geofence detected and no task took yet,
/// the open visits, the notice when the van leaves a stop with its action undone, and each visit's report
/// (sent once, through the outbox). The workflow opens a visit in the same transaction as the arrival it
/// commits; everything after that is here. A lock-guarded class: the workflow reads it for every task view.
final class StopVisits: MethodOwner, Sendable {
    private struct State {
        /// Open visits by stop id.
        var open: [String: VisitRecord] = [:]
        /// Arrivals the geofence detected that the task has not taken yet, by stop id.
        var detected: [String: ArrivalDetected] = [:]
    }

    let book: VisitBook
    let geofences: GeofenceMonitor
    private let hub: EventHub
    private let pushes: PushCenter
    private let clock: DaemonClock
    let logger: Logger
    private let state: Mutex<State>

    init(book: VisitBook, geofences: GeofenceMonitor, hub: EventHub, pushes: PushCenter, clock: DaemonClock, logger: Logger) throws {
        self.book = book
        self.geofences = geofences
        self.hub = hub
        self.pushes = pushes
        self.clock = clock
        self.logger = logger
        var state = State()
        for visit in try book.open() { state.open[visit.stopId] = visit }
        self.state = Mutex(state)
    }

    var open: [String: VisitRecord] { state.withLock { $0.open } }

    func detected(at stopId: String) -> ArrivalDetected? { state.withLock { $0.detected[stopId] } }

    /// The geofence saw the van arrive at a stop its task is on the way to: front ends hear it (a suggestion, or
    /// the arrival the workflow performs next).
    func detect(_ detection: ArrivalDetected) {
        state.withLock { $0.detected[detection.stopId] = detection }
        logger.info(
            "arrival detected at \(detection.stopId) (\(Int(detection.distanceMeters)) m, \(Int(detection.dwellSeconds)) s slow inside)",
            metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.arrivalDetected.rawValue)", "task_id": "\(detection.taskId)"])
        hub.publish(Events.arrivalSuggested, detection)
    }

    /// The visit an arrival opens: at the detected arrival when the geofence saw it first, else now. A tap with
    /// no fresh fix, or beyond the exit border, opens none: the vehicle is not known to be there, and its first
    /// fix away would count as leaving. The workflow commits it with the arrival, then calls `opened`.
    func visit(at stop: Stop, taskId: String, distance: Double?, inside: Bool, stamp: Stamp) -> VisitRecord? {
        guard geofences.isEnabled else { return nil }
        let detected = detected(at: stop.id)
        guard detected != nil || inside else { return nil }
        return VisitRecord(
            id: RandomID.uuid(), taskId: taskId, stopId: stop.id, lat: stop.lat, lng: stop.lng,
            radius: stop.geofenceRadius ?? geofences.defaultRadius, arrivedAt: detected?.detectedAt ?? stamp.time,
            arrivalSource: detected == nil ? TransitionSource.driver.rawValue : TransitionSource.geofence.rawValue,
            arrivalDistance: (detected?.distanceMeters ?? distance)?.rounded(), timeSource: stamp.source.rawValue)
    }

    /// The visit is stored (with its arrival): it is open now.
    func opened(_ visit: VisitRecord) {
        state.withLock {
            $0.open[visit.stopId] = visit
            $0.detected[visit.stopId] = nil
        }
        hub.publish(Events.visitChanged, Self.view(visit))
    }

    /// Left a stop with its action undone: the departure is now (the visit stays open until the action is done;
    /// a van that comes back and leaves again departs again); at a destination the driver is told once (held
    /// while driving, like a push).
    func leftUnfinished(stopId: String) async {
        let now = clock.now().time
        let marked = state.withLock { state -> (visit: VisitRecord, first: Bool)? in
            guard var visit = state.open[stopId] else { return nil }
            let first = !visit.leftUnfinished
            visit.leftUnfinished = true
            visit.departedAt = max(now, visit.arrivedAt)
            state.open[stopId] = visit
            return (visit, first)
        }
        guard let (visit, first) = marked, let departed = visit.departedAt else { return }
        _ = logger.valueOrLog("marking the visit at \(stopId) left unfinished") { try book.markLeftUnfinished(id: visit.id, departedAt: departed) }
        hub.publish(Events.visitChanged, Self.view(visit))
        guard first else { return }
        logger.notice("left \(stopId) with its task unfinished", metadata: ["task_id": "\(visit.taskId)"])
        guard Stop.parse(stopId)?.kind == .dropoff else { return }
        await pushes.raise(
            kind: PushCenter.leftUnfinishedKind, taskId: visit.taskId,
            title: "Left the drop-off of \(visit.taskId) unfinished: deliver it or report a failure")
    }

    /// Left a stop after its action: the visit ends, and its report is queued with it. `departedEarlier`: left
    /// unfinished and completed away, the visit ended when the van crossed the exit border then, not now.
    /// Returns whether a visit closed (the geofences change).
    @discardableResult
    func close(stopId: String, departedEarlier: Bool = false) -> Bool {
        guard let visit = state.withLock({ $0.open[stopId] }) else { return false }
        let stamp = clock.now()
        let departed = (departedEarlier ? visit.departedAt : nil) ?? max(stamp.time, visit.arrivedAt)
        let report = VisitReport(
            visitId: visit.id, taskId: visit.taskId, stopId: visit.stopId, arrivedAt: visit.arrivedAt, departedAt: departed,
            dwellSeconds: (departed - visit.arrivedAt).rounded(), arrivalDistance: visit.arrivalDistance,
            arrivalSource: TransitionSource(rawValue: visit.arrivalSource) ?? .driver, leftUnfinished: visit.leftUnfinished,
            timeSource: visit.timeSource.flatMap(TimeSource.init(rawValue:)))
        do {
            let item = OutboxItemRecord(
                kind: .visit, taskId: visit.taskId, idempotencyKey: visit.id, payload: Data(try Codec.encode(report)), createdAt: stamp.time)
            try book.close(id: visit.id, departedAt: departed, dwellSeconds: report.dwellSeconds, report: item)
        } catch {
            logger.error("cannot close the visit at \(stopId): \(Store.describeWriteFailure(error))")
            return false
        }
        state.withLock { $0.open[stopId] = nil }
        var closed = visit
        closed.departedAt = departed
        closed.dwellSeconds = report.dwellSeconds
        closed.state = .queued
        hub.publish(Events.visitChanged, Self.view(closed))
        logger.info("left \(stopId) after \(Int(report.dwellSeconds)) s", metadata: ["task_id": "\(visit.taskId)"])
        return true
    }

    func recent(limit: Int = 50) throws -> VisitList {
        VisitList(visits: try book.recent(limit: limit).map(Self.view))
    }

    static func view(_ visit: VisitRecord) -> VisitView {
        VisitView(
            id: visit.id, taskId: visit.taskId, stopId: visit.stopId, arrivedAt: visit.arrivedAt,
            arrivalSource: TransitionSource(rawValue: visit.arrivalSource) ?? .driver, arrivalDistanceMeters: visit.arrivalDistance,
            departedAt: visit.departedAt, dwellSeconds: visit.dwellSeconds, leftUnfinished: visit.leftUnfinished, state: visit.state.rawValue)
    }

    /// `visits.list`.
    func register(in router: inout RPCRouter) {
        router.register(Methods.visitsList) { _, _ in try self.recent() }
    }
}
