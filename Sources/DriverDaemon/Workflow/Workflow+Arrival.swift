import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials

/// Stops that notice themselves: the geofences to watch, arrivals the daemon performs or suggests, visits from
/// arrival to departure (sent once through the outbox), and completions far from the stop.
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
        geofences.setTargets(Self.geofenceTargets(tasks: tasks, openVisits: openVisits, defaultRadius: geofences.defaultRadius))
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

    /// The visit an arrival opens: at the detected arrival when the geofence saw it first, else now. A tap with
    /// no fresh fix, or beyond the exit border, opens none: the vehicle is not known to be there, and its first
    /// fix away would count as leaving.
    func openVisit(at stop: Stop, task: LocalTask, distance: Double?, inside: Bool, stamp: Stamp) -> VisitRecord? {
        guard geofences.isEnabled else { return nil }
        let detected = detectedArrivals[stop.id]
        guard detected != nil || inside else { return nil }
        return VisitRecord(
            id: Self.newKey(), taskId: task.id, stopId: stop.id, lat: stop.lat, lng: stop.lng,
            radius: stop.geofenceRadius ?? geofences.defaultRadius, arrivedAt: detected?.detectedAt ?? stamp.time,
            arrivalSource: detected == nil ? TransitionSource.driver.rawValue : TransitionSource.geofence.rawValue,
            arrivalDistance: (detected?.distanceMeters ?? distance)?.rounded(), timeSource: stamp.source.rawValue)
    }

    /// What the geofence watch decided.
    func geofence(_ actions: [GeofenceWatch.Action]) async {
        for action in actions {
            switch action {
            case .arrived(let stopId, let taskId, let distance, let dwell, _):
                await arrived(stopId: stopId, taskId: taskId, distance: distance, dwell: dwell)
            case .left(let stopId, _, _, _, let unfinished):
                if unfinished { await leftUnfinished(stopId: stopId) } else { closeVisit(stopId: stopId) }
            }
        }
    }

    private func arrived(stopId: String, taskId: String, distance: Double, dwell: Double) async {
        guard let task = tasks[taskId], let kind = Stop.parse(stopId)?.kind, Self.awaitsArrival(kind, task.status) else { return }
        let detection = ArrivalDetected(
            taskId: taskId, stopId: stopId, distanceMeters: distance.rounded(), dwellSeconds: dwell.rounded(), detectedAt: now(),
            mode: geofences.mode)
        detectedArrivals[stopId] = detection
        logger.info(
            "arrival detected at \(stopId) (\(Int(distance.rounded())) m, \(Int(dwell.rounded())) s slow inside)",
            metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.arrivalDetected.rawValue)", "task_id": "\(taskId)"])
        hub.publish(Events.arrivalSuggested, detection)
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

    /// Left a stop with its action undone: noted on the visit; at a destination the driver is told (held while
    /// driving, like a push).
    private func leftUnfinished(stopId: String) async {
        guard var visit = openVisits[stopId], !visit.leftUnfinished else { return }
        visit.leftUnfinished = true
        openVisits[stopId] = visit
        try? visitBook.markLeftUnfinished(id: visit.id)
        hub.publish(Events.visitChanged, Self.view(visit))
        logger.notice("left \(stopId) with its task unfinished", metadata: ["task_id": "\(visit.taskId)"])
        guard Stop.parse(stopId)?.kind == .dropoff else { return }
        await pushes.raise(
            kind: PushCenter.leftUnfinishedKind, taskId: visit.taskId,
            title: "Left the drop-off of \(visit.taskId) unfinished: deliver it or report a failure")
    }

    /// Left a stop after its action: the visit ends, and its report is queued with it.
    func closeVisit(stopId: String) {
        guard let visit = openVisits[stopId] else { return }
        let stamp = tracker.clock.now()
        let departed = max(stamp.time, visit.arrivedAt)
        let report = VisitReport(
            visitId: visit.id, taskId: visit.taskId, stopId: visit.stopId, arrivedAt: visit.arrivedAt, departedAt: departed,
            dwellSeconds: (departed - visit.arrivedAt).rounded(), arrivalDistance: visit.arrivalDistance,
            arrivalSource: TransitionSource(rawValue: visit.arrivalSource) ?? .driver, leftUnfinished: visit.leftUnfinished,
            timeSource: visit.timeSource.flatMap(TimeSource.init(rawValue:)))
        do {
            let item = OutboxItemRecord(
                kind: .visit, taskId: visit.taskId, idempotencyKey: visit.id, payload: try Self.encode(report), createdAt: stamp.time)
            try visitBook.close(id: visit.id, departedAt: departed, dwellSeconds: report.dwellSeconds, report: item)
        } catch {
            logger.error("cannot close the visit at \(stopId): \(Store.describeWriteFailure(error))")
            return
        }
        openVisits[stopId] = nil
        refreshGeofences()
        uplink?.itemQueued()
        var closed = visit
        closed.departedAt = departed
        closed.dwellSeconds = report.dwellSeconds
        closed.state = .queued
        hub.publish(Events.visitChanged, Self.view(closed))
        logger.info("left \(stopId) after \(Int(report.dwellSeconds)) s", metadata: ["task_id": "\(visit.taskId)"])
    }

    /// A task's odometer readings: from its acceptance to its end (delivered, or returned to the vendor).
    func distanceMark(for status: TaskStatus) -> TaskDistanceMark? {
        switch status {
        case .accepted: .started(metres: travel.metres, vehicleKm: travel.vehicleKm)
        case .delivered, .returnedToVendor: .ended(metres: travel.metres, vehicleKm: travel.vehicleKm)
        default: nil
        }
    }

    /// The reading committed with the transition, in memory too.
    func noteDistance(_ taskId: String, _ mark: TaskDistanceMark?) {
        switch mark {
        case .started(let metres, let km):
            if taskDistances[taskId] == nil { taskDistances[taskId] = TaskReading(start: metres, vehicleStartKm: km) }
        case .ended(let metres, let km):
            if var reading = taskDistances[taskId], reading.end == nil {
                reading.end = metres
                reading.vehicleEndKm = km
                taskDistances[taskId] = reading
            }
        case nil:
            break
        }
    }

    func visits(limit: Int = 50) throws -> VisitList {
        VisitList(visits: try visitBook.recent(limit: limit).map(Self.view))
    }

    static func view(_ visit: VisitRecord) -> VisitView {
        VisitView(
            id: visit.id, taskId: visit.taskId, stopId: visit.stopId, arrivedAt: visit.arrivedAt,
            arrivalSource: TransitionSource(rawValue: visit.arrivalSource) ?? .driver, arrivalDistanceMeters: visit.arrivalDistance,
            departedAt: visit.departedAt, dwellSeconds: visit.dwellSeconds, leftUnfinished: visit.leftUnfinished, state: visit.state.rawValue)
    }
}
