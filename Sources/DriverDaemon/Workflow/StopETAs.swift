import BackendContract
import DriverAPI
import DriverDomain

/// The ETAs of the route's stops: the backend's for a task's next stop while it is fresh, else the unit's own from
/// the last fix (the drop-off's along the task's polyline). A value the workflow holds; no I/O, the position and the
/// clocks are given.
struct StopETAs {
    /// How long the backend's estimate stands (it is refreshed every 30 s en route).
    static let serverFreshFor = 90.0

    /// The backend's ETA for a task's next stop, with the monotonic time it was fetched.
    private var server: [String: (eta: ETAResponse, fetchedAt: Double)] = [:]

    mutating func store(_ eta: ETAResponse, monotonic: Double) { server[eta.taskId] = (eta, monotonic) }

    /// Forgets every estimate (another driver's route).
    mutating func removeAll() { server = [:] }

    /// The backend's estimate while it is fresh, counted down since it was fetched; else the local one from `position`
    /// (nil without a fix). `now`: the trusted clock's time, for the local estimate's stamp.
    func eta(to stop: Stop, of task: LocalTask, position: (fix: Fix?, recentSpeed: Double?), monotonic: Double, now: Double) -> ETAView? {
        if let known = server[task.id], known.eta.stopId == stop.id, case let elapsed = monotonic - known.fetchedAt,
           elapsed < Self.serverFreshFor, let seconds = known.eta.etaSeconds {
            return ETAView(
                seconds: max(0, seconds - elapsed), distanceMeters: known.eta.distanceMeters, source: "server", computedAt: known.eta.computedAt)
        }
        guard let fix = position.fix else { return nil }
        let from = LocalETA.Point(lat: fix.latitude, lng: fix.longitude)
        let destination = LocalETA.Point(lat: stop.lat, lng: stop.lng)
        // The polyline runs from pickup to drop-off: it is the road only on the way to the drop-off.
        let path = stop.kind == .dropoff ? Polyline.decode(task.detail.polyline) ?? [] : []
        let metres = LocalETA.remainingDistance(from: from, to: destination, along: path)
        return ETAView(seconds: LocalETA.seconds(distance: metres, recentSpeed: position.recentSpeed), distanceMeters: metres, source: "local", computedAt: now)
    }

    /// Local ETAs stop after stop, from `position` (or from the first stop without a fix), for an order not taken yet.
    static func planned(_ stops: [Stop], position: (fix: Fix?, recentSpeed: Double?)) -> [ResequenceResult.StopETA] {
        var at = position.fix.map { LocalETA.Point(lat: $0.latitude, lng: $0.longitude) }
        var seconds = 0.0
        return stops.map { stop in
            let point = LocalETA.Point(lat: stop.lat, lng: stop.lng)
            seconds += LocalETA.seconds(distance: LocalETA.distance(at ?? point, point) * LocalETA.detourFactor, recentSpeed: position.recentSpeed)
            at = point
            return ResequenceResult.StopETA(stopId: stop.id, etaSeconds: seconds.rounded())
        }
    }
}
