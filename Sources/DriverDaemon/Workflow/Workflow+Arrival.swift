import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials

/// Stops that notice themselves, as far as tasks go: the geofences to watch, arrivals the daemon performs or
/// suggests, and completions far from the stop. The visits themselves are `StopVisits`'.
extension Workflow {
    /// A fix older than this does not say where a completion happened.
    static let freshFixSeconds = 30.0

    /// What the geofence watch looks at: each stop its task is on the way to, and each stop with an open visit.
    static func geofenceTargets(tasks: [String: LocalTask], openVisits: [String: VisitRecord], defaultRadius: Double) -> [GeofenceWatch.Target] {
        var targets: [GeofenceWatch.Target] = []
        // Every task change comes here: the few stops awaiting arrival are sorted, not the whole route's tasks (a
        // task awaits one arrival at a time, so the order is the tasks').
        for task in tasks.values {
            for stop in task.detail.stops where openVisits[stop.id] == nil && Self.awaitsArrival(stop.kind, task.status) {
                targets.append(GeofenceWatch.Target(
                    stopId: stop.id, taskId: task.id, lat: stop.lat, lng: stop.lng, radius: stop.geofenceRadius ?? defaultRadius, stage: .approaching))
            }
        }
        targets.sort { ($0.taskId, $0.stopId) < ($1.taskId, $1.stopId) }
        for visit in openVisits.values.sorted(by: { $0.stopId < $1.stopId }) {
            let kind = Stop.parse(visit.stopId)?.kind
            let serving = tasks[visit.taskId].map { kind.map { Self.arrivedStatus($0) } == $0.status } ?? false
            targets.append(GeofenceWatch.Target(
                stopId: visit.stopId, taskId: visit.taskId, lat: visit.lat, lng: visit.lng, radius: visit.radius,
                stage: serving ? .serving : .served))
        }
        return targets
    }

    /// Whether the task's next step is arriving at its stop of this kind.
    static func awaitsArrival(_ kind: StopKind, _ status: TaskStatus) -> Bool {
        switch kind {
        case .pickup: status == .accepted
        case .dropoff: status == .pickedUp
        }
    }

    static func arrivedStatus(_ kind: StopKind) -> TaskStatus { kind == .pickup ? .arrivedAtStore : .arrivedAtDestination }

    func refreshGeofences() {
        guard geofences.isEnabled else { return }
        geofences.setTargets(Self.geofenceTargets(tasks: tasks, openVisits: visits.open, defaultRadius: geofences.defaultRadius))
    }

    /// Straight-line metres from the latest fresh fix to a stop (never off shift), and the fix's error.
    func distance(to stop: Stop) -> (metres: Double, horizontalError: Double?)? {
        guard shift.isOn, let fix = tracker.currentPosition(maxAge: Self.freshFixSeconds).fix else { return nil }
        let metres = Geo.distance(latitude1: fix.latitude, longitude1: fix.longitude, latitude2: stop.lat, longitude2: stop.lng)
        return (metres, fix.horizontalError)
    }

    /// Where an action happens relative to its stop. A delivery or failure beyond the exit border (with a fresh
    /// fix) needs a reason; without a fix it is allowed and marked `position: unknown`.
    func placeCheck(
        _ action: DriverAction, task: LocalTask, next: TaskStatus, outsideReason: OutsideReason?
    ) throws -> (stop: Stop?, distance: Double?, inside: Bool, position: PositionCheck?) {
        let kind: StopKind
        switch next {
        case .arrivedAtStore: kind = .pickup
        case .arrivedAtDestination, .delivered, .deliveryFailed: kind = .dropoff
        default: return (nil, nil, false, nil)
        }
        guard let stop = task.stop(kind) else { return (nil, nil, false, nil) }
        let completes = action == .deliver || action == .fail
        guard let (metres, error) = distance(to: stop) else { return (stop, nil, false, completes ? .unknown : nil) }
        let border = geofences.exitBorder(radius: stop.geofenceRadius, horizontalError: error)
        if completes, metres > border, outsideReason == nil {
            throw APIError(
                .outsideGeofence,
                "the vehicle is \(Int(metres.rounded())) m from the stop, beyond its \(Int(border.rounded())) m geofence: "
                    + "give a reason (\(OutsideReason.allCases.map(\.rawValue).joined(separator: ", ")))",
                data: .object([
                    "distanceMeters": .number("\(Int(metres.rounded()))"), "exitBorderMeters": .number("\(Int(border.rounded()))"),
                    "reasons": .array(OutsideReason.allCases.map { .string($0.rawValue) }),
                ]))
        }
        return (stop, metres, metres <= border, nil)
    }

    /// What the geofence watch decided.
    func geofence(_ actions: [GeofenceWatch.Action]) async {
        for action in actions {
            switch action {
            case .arrived(let stopId, let taskId, let distance, let dwell, _):
                await arrived(stopId: stopId, taskId: taskId, distance: distance, dwell: dwell)
            case .left(let stopId, _, _, _, let unfinished, let departedEarlier):
                if unfinished {
                    await visits.leftUnfinished(stopId: stopId)
                } else if visits.close(stopId: stopId, departedEarlier: departedEarlier) {
                    refreshGeofences()
                }
            }
        }
    }

    private func arrived(stopId: String, taskId: String, distance: Double, dwell: Double) async {
        guard let task = tasks[taskId], let kind = Stop.parse(stopId)?.kind, Self.awaitsArrival(kind, task.status) else { return }
        visits.detect(ArrivalDetected(
            taskId: taskId, stopId: stopId, distanceMeters: distance.rounded(), dwellSeconds: dwell.rounded(), detectedAt: now(),
            mode: geofences.mode))
        routeUpdated()
        guard geofences.mode == .auto else {
            publish(task)
            return
        }
        do {
            _ = try await act(.arrive, taskId: taskId, source: .geofence)
        } catch {
            logger.warning("the detected arrival at \(stopId) was not performed: \(error)", metadata: ["task_id": "\(taskId)"])
        }
    }
}
