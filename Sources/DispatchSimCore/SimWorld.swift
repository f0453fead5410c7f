import DriverAPI
import BackendContract
import DriverDomain

/// The reference backend's state and rules, pure: the HTTP layer parses, calls one of these with the time,
/// and maps the outcome to an answer. Codable, so `--state FILE` can keep it across restarts.
public struct SimWorld: Codable, Sendable {
    public struct TaskRecord: Codable, Sendable, Equatable {
        public var task: Scenario.Task
        public var podAccepted = false
        public var otpAttemptsLeft: Int
        public var failureReason: FailureReason?
        public var updatedAt: Double
        public var photo: PhotoProof?
    }

    public private(set) var drivers: [Scenario.Driver]
    public internal(set) var tasks: [String: TaskRecord] = [:]
    /// Task ids in the order they were created.
    var taskOrder: [String] = []
    var sequences: [String: [String]]
    var pushLog: [String: [Push]] = [:]
    var statusLedger = IdempotencyLedger<StatusOutcome>()
    var podLedger = IdempotencyLedger<PODOutcome>()
    var visitLog: VisitLog?
    var activityLog: ActivityLog?
    var configLog: ConfigLog?
    var releaseLog: ReleaseLog?
    var fleetLog: FleetLog?
    var healthLog: HealthLog?
    var batchIDs: Set<String> = []
    var pingKeys: Set<String> = []
    public internal(set) var lastPosition: [String: LocationPing] = [:]
    /// Unique pings and heartbeats as they arrived, per driver (the newest `receivedKept` and 1,000).
    var received: [String: [LocationPing]] = [:]
    var heartbeats: [String: [UnitHeartbeat]] = [:]
    var lastETAPush: [String: Double] = [:]
    /// When each driver's unit last reported (a batch, a heartbeat), and when its next report is due by the cadence it
    /// told (`LocationBatch.nextBatchWithin`): a parked van that reports every two minutes is present, not stale.
    var lastReportAt: [String: Double] = [:]
    var nextReportDue: [String: Double] = [:]
    /// Since when each driver's van has stood (the fix time of the first ping of its latest run below
    /// `SimWorld.parkedSpeed`); nil while it moves.
    var parkedSince: [String: Double] = [:]
    /// Bumped to revoke every token issued to a driver before.
    public private(set) var tokenGeneration: [String: Int] = [:]
    public internal(set) var stats = SimStats()
    public let etaSpeed: Double
    public let otpAttempts: Int
    public let etaPushSeconds: Double

    /// What `--state` keeps: everything but the evidence of received locations (tests read it live; saving it
    /// at every change would grow the file without end).
    private enum CodingKeys: String, CodingKey {
        case drivers, tasks, taskOrder, sequences, pushLog, statusLedger, podLedger, visitLog, activityLog, configLog, releaseLog, fleetLog, healthLog, batchIDs, pingKeys, lastPosition
        case lastETAPush, tokenGeneration, stats, etaSpeed, otpAttempts, etaPushSeconds
    }

    public init(scenario: Scenario, now: Double = 0) {
        drivers = scenario.drivers
        etaSpeed = scenario.etaSpeed
        otpAttempts = scenario.otpAttempts
        etaPushSeconds = scenario.etaPushSeconds
        sequences = scenario.sequences
        for task in scenario.tasks {
            tasks[task.id] = TaskRecord(task: task, otpAttemptsLeft: scenario.otpAttempts, updatedAt: now)
            taskOrder.append(task.id)
        }
    }

    // MARK: Reading

    public func driver(username: String, password: String) -> Scenario.Driver? {
        drivers.first { $0.username == username && $0.password == password }
    }

    public func driver(id: String) -> Scenario.Driver? { drivers.first { $0.id == id } }

    /// The task if it exists and belongs to `driverId` (another driver's task is "not found" to this one).
    public func record(taskId: String, driverId: String) -> TaskRecord? {
        guard let record = tasks[taskId], record.task.driverId == driverId else { return nil }
        return record
    }

    public func riderTask(_ record: TaskRecord) -> RiderTask {
        let task = record.task
        var points = [Polyline.Point(lat: task.pickup.lat, lng: task.pickup.lng)]
        points += (task.waypoints ?? []).map { Polyline.Point(lat: $0.lat, lng: $0.lng) }
        points.append(Polyline.Point(lat: task.dropoff.lat, lng: task.dropoff.lng))
        let stops = [(StopKind.pickup, task.pickup), (.dropoff, task.dropoff)].map { kind, place in
            Stop(
                id: Stop.id(taskId: task.id, kind: kind), kind: kind, address: place.address, lat: place.lat, lng: place.lng,
                name: place.name, phone: place.phone, geofenceRadius: place.geofenceRadius ?? Scenario.defaultGeofenceRadius)
        }
        return RiderTask(
            id: task.id, status: task.status, podType: task.podType, podAccepted: record.podAccepted, stops: stops,
            polyline: Polyline.encode(points), failureReason: record.failureReason, updatedAt: record.updatedAt)
    }

    public func activeTasks(driverId: String, now: Double) -> ActiveTasks {
        let active = taskOrder.compactMap { tasks[$0] }.filter { $0.task.driverId == driverId && !$0.task.status.isTerminal }
        return ActiveTasks(driverId: driverId, tasks: active.map(riderTask), sequence: sequence(driverId: driverId), serverTime: now)
    }

    /// The stops of the driver's active tasks in visiting order: the stored order first, then any active stop it
    /// misses (a task assigned later) pickup before drop-off.
    public func sequence(driverId: String) -> [String] {
        let activeStops = taskOrder.compactMap { tasks[$0] }
            .filter { $0.task.driverId == driverId && !$0.task.status.isTerminal }
            .flatMap { [Stop.id(taskId: $0.task.id, kind: .pickup), Stop.id(taskId: $0.task.id, kind: .dropoff)] }
        let stored = (sequences[driverId] ?? []).filter(activeStops.contains)
        return stored + activeStops.filter { !stored.contains($0) }
    }

    /// Pushes to `driverId` with an id above `after`, oldest first.
    public func pushes(driverId: String, after: Int) -> [Push] {
        (pushLog[driverId] ?? []).filter { $0.id > after }
    }

    // MARK: Tokens

    public func tokenGeneration(driverId: String) -> Int { tokenGeneration[driverId] ?? 0 }

    /// Makes every token issued so far to the driver (or to every driver) invalid.
    public mutating func revokeTokens(driverId: String?) {
        for driver in drivers where driverId == nil || driver.id == driverId {
            tokenGeneration[driver.id, default: 0] += 1
        }
    }


    // MARK: Pushes

    mutating func push(
        _ kind: PushKind, driverId: String, taskId: String? = nil, task: RiderTask? = nil, sequence: [String]? = nil,
        message: String? = nil, etaSeconds: Double? = nil, request: FleetRequest? = nil, now: Double
    ) -> Push {
        let id = (pushLog[driverId]?.last?.id ?? 0) + 1
        let push = Push(
            id: id, kind: kind, taskId: taskId, task: task, sequence: sequence, message: message, etaSeconds: etaSeconds, request: request,
            sentAt: now)
        pushLog[driverId, default: []].append(push)
        stats.pushesSent += 1
        return push
    }
}
