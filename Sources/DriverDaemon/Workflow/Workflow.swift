import BackendClient
import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials
import JSONRPC
import Logging
import NIOPosix
import Synchronization

/// The delivery workflow (design brief §3.3): the driver's tasks and route, driver actions applied
/// optimistically (the new state and its outbox item committed together, durably, before the reply), and
/// the backend's answers, pushes and syncs merged in. An actor: every change of a task is serialised.
actor Workflow {
    let book: TaskBook
    let outbox: Outbox
    /// The backend's calls (the route, the ETA, a code's check); nil without a backend.
    let session: BackendSession?
    let hub: EventHub
    let tracker: Tracker
    let spool: PhotoSpool
    let pushes: PushCenter
    let shift: Shift
    let logger: Logger
    /// Arrivals and departures by geofence (fed on the GPS thread): the workflow says which stops to watch.
    let geofences: GeofenceMonitor
    /// The visits arrivals open (committed with the arrival), and what happens to them after.
    let visits: StopVisits
    /// The odometer: each task's readings from its acceptance to its end are committed with its transitions.
    let travel: TravelMonitor

    var tasks: [String: LocalTask] = [:]
    /// The stop order (all stops of the active tasks, visited ones included), as the backend keeps it.
    var sequence: [String] = []
    var syncedAt: Double?
    /// The stops' ETAs: the backend's while fresh, else the unit's own.
    var etas = StopETAs()
    /// Set by pushes and reconnects; the service loop syncs when it is.
    let syncNeeded: Wakeup
    var syncRequested = true
    /// A `route.updated` is on its way: further changes before it goes ride along.
    var routeUpdatePending = false

    init(
        book: TaskBook, outbox: Outbox, session: BackendSession?, hub: EventHub, tracker: Tracker, spool: PhotoSpool, pushes: PushCenter,
        shift: Shift, logger: Logger, geofences: GeofenceMonitor, visits: StopVisits, travel: TravelMonitor
    ) throws {
        self.travel = travel
        self.geofences = geofences
        self.visits = visits
        self.pushes = pushes
        self.shift = shift
        self.book = book
        self.outbox = outbox
        self.session = session
        self.hub = hub
        self.tracker = tracker
        syncNeeded = tracker.clock.wakeup()
        self.spool = spool
        self.logger = logger
        for record in try book.tasks() {
            let task = try LocalTask(record: record)
            tasks[task.id] = task
        }
        sequence = try book.sequence()
        geofences.setTargets(Self.geofenceTargets(tasks: tasks, openVisits: visits.open, defaultRadius: geofences.defaultRadius))
    }

    /// Stamps come from the trusted clock (GPS time while the system clock is not synchronised); durations
    /// from the monotonic one.
    nonisolated func now() -> Double { tracker.clock.now().time }

    nonisolated var monotonic: Double { tracker.clock.monotonic }

    // MARK: The route

    /// Open stops in visiting order.
    func openStops() -> [String] {
        RouteRules.openStops(sequence: sequence, fallback: fallbackStops(), parse: Stop.parse) { self.tasks[$0]?.status }
    }

    /// Tasks the driver accepted and has not finished (an update waits for them).
    func tasksInProgress() -> Int {
        tasks.values.filter { $0.status != .assigned && !$0.status.isTerminal }.count
    }

    /// The first of `openStops()`.
    func nextStopId() -> String? {
        RouteRules.firstOpenStop(sequence: sequence, fallback: fallbackStops, parse: Stop.parse) { self.tasks[$0]?.status }
    }

    /// Stops the backend's sequence does not hold yet follow by task id.
    private func fallbackStops() -> [String] {
        tasks.values.sorted { $0.id < $1.id }.flatMap { $0.detail.stops.map(\.id) }
    }

    func stop(_ stopId: String) -> (LocalTask, Stop)? {
        guard let (taskId, kind) = Stop.parse(stopId), let task = tasks[taskId], let stop = task.stop(kind) else { return nil }
        return (task, stop)
    }

    func view(_ task: LocalTask) -> TaskView { view(task, nextStopId: nextStopId()) }

    /// The task as front ends see it, with its odometer distance since it was accepted.
    func view(_ task: LocalTask, nextStopId: String?) -> TaskView {
        var view = task.view(nextStopId: nextStopId)
        if let distance = travel.taskDistance(task.id) {
            view.distanceMeters = distance.metres
            view.vehicleDistanceMeters = distance.vehicleMetres
        }
        return view
    }

    func route() -> RouteView {
        let open = openStops()
        let stops = open.compactMap { id in stop(id).map { $0.stopView($1, isNext: id == open.first) } }
        let active = tasks.values.filter { !$0.status.isTerminal || $0.sync != .synced }.sorted { $0.id < $1.id }
        return RouteView(stops: stops, tasks: active.map { view($0, nextStopId: open.first) }, syncedAt: syncedAt)
    }

    func next() -> RouteNext {
        let open = openStops()
        guard let first = open.first, let (task, stop) = stop(first) else { return RouteNext(next: nil, remainingStops: 0) }
        let card = NextStopCard(
            stop: task.stopView(stop, isNext: true), task: view(task, nextStopId: first), eta: eta(to: stop, of: task),
            primaryAction: TaskWorkflow.primaryAction(task.status, podCaptured: task.pod.allowsDelivery),
            navigation: .to(lat: stop.lat, lng: stop.lng), distanceMeters: distance(to: stop)?.metres,
            arrivalDetected: visits.detected(at: stop.id))
        return RouteNext(next: card, remainingStops: open.count)
    }

    func navigation(stopId: String?) throws -> NavResult {
        guard let id = stopId ?? nextStopId() else { throw APIError(.notFound, "no stop is left on the route") }
        guard let (task, stop) = stop(id) else { throw APIError(.notFound, "no stop \(id) on the route") }
        return NavResult(stop: task.stopView(stop, isNext: id == nextStopId()), links: .to(lat: stop.lat, lng: stop.lng))
    }

    func eta(to stop: Stop, of task: LocalTask) -> ETAView? {
        etas.eta(to: stop, of: task, position: tracker.currentPosition(), monotonic: monotonic, now: now())
    }

    func storeServerETA(_ eta: ETAResponse) {
        etas.store(eta, monotonic: monotonic)
        routeUpdated()
    }

    /// The task a call names, or the one the next stop belongs to.
    func resolve(_ taskId: String?) throws -> LocalTask {
        if let taskId {
            guard let task = tasks[taskId] else { throw APIError(.notFound, "no task \(taskId) on this unit") }
            return task
        }
        guard let first = nextStopId(), let (taskId, _) = Stop.parse(first), let task = tasks[taskId] else {
            throw APIError(.notFound, "no task is waiting: name one with a task id")
        }
        return task
    }

    // MARK: Driver actions

    /// Validates the action, commits the new state with its outbox item durably (`commitDriverChange`), and returns.
    /// A delivery or failure beyond the stop's exit border needs `outsideReason`; an arrival opens the stop's visit.
    ///
    /// The backend never hears of a change the unit could lose in a power cut (the store keeps an item from the
    /// sender until its sync is done): a driver repeating a lost action under a new key would be refused.
    func act(
        _ action: DriverAction, taskId: String?, reason: FailureReason? = nil, note: String? = nil, outsideReason: OutsideReason? = nil,
        source: TransitionSource = .driver
    ) async throws -> TaskView {
        var task = try resolve(taskId)
        let next: TaskStatus
        switch TaskWorkflow.apply(action, to: task.status, podCaptured: task.pod.allowsDelivery) {
        case .success(let status): next = status
        case .failure(let refusal): throw Self.refused(refusal)
        }
        if let note, note.count > 500 { throw APIError.invalidParams("note: at most 500 characters (got \(note.count))") }
        let place = try placeCheck(action, task: task, next: next, outsideReason: outsideReason)
        let stamp = tracker.clock.now()
        let now = stamp.time
        let request = StatusUpdateRequest(
            status: next, location: currentLocation(), timestamp: now, timeSource: stamp.source, reason: reason, note: note,
            source: source, stopDistance: place.distance?.rounded(), outsideReason: outsideReason, position: place.position)
        task.status = next
        task.sync = .pending
        if next == .deliveryFailed { task.failureReason = reason }
        task.updatedAt = now
        let item = OutboxItemRecord(
            kind: .status, taskId: task.id, idempotencyKey: Self.newKey(), payload: try Self.encode(request), createdAt: now)
        let visit = place.stop.flatMap { stop in
            next == .arrivedAtStore || next == .arrivedAtDestination
                ? visits.visit(at: stop, taskId: task.id, distance: place.distance, inside: place.inside, stamp: stamp) : nil
        }
        let current = try await commitDriverChange(task, item: item, visit: visit, distance: travel.taskMark(for: next))
        logger.info(
            "task \(task.id): \(action.rawValue) → \(next.rawValue)\(source == .geofence ? " (geofence)" : "")", metadata: ["task_id": "\(task.id)"])
        return view(current)
    }

    /// The one way a driver's change is committed (an action, a proof): the task with its outbox item, the visit an
    /// arrival opens and the task's odometer reading, to the write-ahead log (a full disk fails it here) without
    /// holding the actor for the disk; then synced on NIO's blocking pool; only then does the store announce the item
    /// to the uplink and are front ends told. Returns the task as it is now: the ack may have come during the sync,
    /// and no one hears an older state after it.
    func commitDriverChange(_ task: LocalTask, item: OutboxItemRecord?, visit: VisitRecord? = nil, distance: TaskDistanceMark? = nil) async throws -> LocalTask {
        try commit(task, item: item, visit: visit, distance: distance, syncLater: true)
        travel.noteTaskMark(task.id, distance)
        if let visit { visits.opened(visit) }
        try await syncToDisk()
        let current = tasks[task.id] ?? task
        publish(current)
        return current
    }

    /// Waits for the disk to hold every commit so far (off the event loop).
    func syncToDisk() async throws {
        let store = book.store
        do {
            try await NIOThreadPool.singleton.runIfActive { try store.syncToDisk() }
        } catch {
            logger.error("a committed change could not be synced to disk: \(Store.describeWriteFailure(error))")
            throw store.health.refusal("the change (committed, but the disk did not confirm it)", error)
        }
    }

    static func refused(_ refusal: TaskWorkflow.Refusal) -> APIError {
        APIError(.actionRefused, refusal.reason, data: .object([
            "current": .string(refusal.current.rawValue),
            "allowed": .array(refusal.allowed.map { .string($0.rawValue) }),
        ]))
    }

    /// Writes the task (and its item, the visit an arrival opens, the task's odometer reading) durably, then
    /// updates memory and tells front ends (the store announces the item to the uplink).
    func commit(
        _ task: LocalTask, item: OutboxItemRecord?, visit: VisitRecord? = nil, distance: TaskDistanceMark? = nil, syncLater: Bool = false
    ) throws {
        do {
            try book.commit(
                task.record, detailChanged: detailChanged(task), item: item, visit: visit, distance: distance, syncLater: syncLater)
        } catch {
            throw book.store.health.refusal("the change", error)
        }
        tasks[task.id] = task
        // A change whose sync comes later goes to front ends once it is on disk (the caller's part; the store announces
        // it to the uplink after that sync).
        guard !syncLater else { return }
        publish(task)
    }

    /// Whether `task`'s backend detail differs from the one held (and stored) now.
    func detailChanged(_ task: LocalTask) -> Bool {
        tasks[task.id].map { $0.storedDetail != task.storedDetail } ?? true
    }

    /// Every task change goes through here or `publishRoute`: the geofences follow (unless the caller knows
    /// that neither the status nor the visits changed).
    func publish(_ task: LocalTask, geofencesFollow: Bool = true) {
        if geofencesFollow { refreshGeofences() }
        hub.publish(Events.taskChanged, view(task))
        routeUpdated()
    }

    func publishRoute() {
        refreshGeofences()
        hub.publish(Events.routeChanged, route())
        routeUpdated()
    }

    /// Screens render the route and the card from `route.updated`: sent once the changes of this turn of the actor
    /// are made (a sync that changes four tasks makes one), and only when a front end listens.
    func routeUpdated() {
        guard !routeUpdatePending, hub.hasSubscribers(Events.routeUpdated) else { return }
        routeUpdatePending = true
        Task { self.publishRouteUpdate() }
    }

    private func publishRouteUpdate() {
        routeUpdatePending = false
        hub.publish(Events.routeUpdated, RouteUpdate(route: route(), next: next()))
    }

    /// Where the vehicle is now, for a transition: the last fix if it is recent, and never off shift.
    nonisolated func currentLocation() -> Location? {
        guard shift.isOn, let fix = tracker.currentPosition().fix else { return nil }
        return Location(lat: fix.latitude, lng: fix.longitude, accuracy: fix.horizontalError)
    }

    static func newKey() -> String { RandomID.uuid() }

    /// A queued request's body, in the API's encoding (`Codec`: sorted keys).
    static func encode(_ value: some Encodable) throws -> Data {
        do {
            return Data(try Codec.encode(value))
        } catch {
            throw APIError(.internalError, "cannot encode the request: \(error)")
        }
    }

    // MARK: Re-sequencing

    func resequence(_ order: [String], confirm: Bool) throws -> ResequenceResult {
        let open = openStops()
        if let problem = RouteRules.sequenceProblem(order, current: open, parse: Stop.parse) {
            throw APIError.invalidParams(problem)
        }
        let etas = plannedETAs(order)
        guard confirm else { return ResequenceResult(order: etas, applied: false) }
        // The backend keeps visited stops in its order too: visited pickups first, then the new order, then
        // the drop-offs that are done (a failed delivery's, after its pickup that opened again).
        let closed = sequence.filter { !open.contains($0) && stop($0) != nil }
        let full = closed.filter { Stop.parse($0)?.kind == .pickup } + order + closed.filter { Stop.parse($0)?.kind == .dropoff }
        let item = OutboxItemRecord(
            kind: .route, taskId: TaskRecord.routeLane, idempotencyKey: Self.newKey(),
            payload: try Self.encode(RouteSequence(sequence: full)), createdAt: now())
        do {
            try book.setSequence(full, item: item)
        } catch {
            throw book.store.health.refusal("the new order", error)
        }
        sequence = full
        publishRoute()
        return ResequenceResult(order: etas, applied: true)
    }

    /// Local ETAs stop after stop from the current position (or from the first stop without a fix).
    func plannedETAs(_ order: [String]) -> [ResequenceResult.StopETA] {
        StopETAs.planned(order.compactMap { stop($0)?.1 }, position: tracker.currentPosition())
    }
}
