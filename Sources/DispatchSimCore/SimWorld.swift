import DriverAPI
import DriverDomain

/// The reference backend's state and rules, pure: the HTTP layer parses, calls one of these, and maps the
/// outcome to a status code. Every method returns what happened; none does I/O.
public struct SimWorld: Sendable {
    public struct TaskState: Sendable, Equatable {
        public var task: Scenario.Task
        public var podAccepted = false
        public var otpAttemptsLeft: Int
    }

    /// An accepted status update, as `/sim/stats` lists it.
    public struct StatusUpdate: Sendable, Equatable {
        public var taskId: String
        public var status: TaskStatus
        public var idempotencyKey: String
        public var time: Double
    }

    public enum StatusOutcome: Sendable, Equatable {
        case applied(TaskStatus)
        /// The same key and body again: the first answer, nothing changed.
        case replayed(TaskStatus)
        /// 409 with the server's current status.
        case invalidTransition(current: TaskStatus)
        /// 409: `DELIVERED` before an accepted proof of delivery.
        case podRequired(current: TaskStatus)
        /// 422: the key was used with another body.
        case keyReused
        case notFound
    }

    public enum OTPOutcome: Sendable, Equatable {
        case accepted
        /// 400; the driver may try again `attemptsLeft` times.
        case wrong(attemptsLeft: Int)
        /// Too many wrong codes.
        case locked
        case notOTPTask
        case notFound
    }

    public enum BatchOutcome: Sendable, Equatable {
        /// Acked; `unique` pings were new.
        case accepted(unique: Int)
        /// The batch id was seen before: acked again, nothing stored twice.
        case duplicate
    }

    public let scenario: Scenario
    public private(set) var tasks: [String: TaskState]
    public private(set) var statusUpdates: [StatusUpdate] = []
    public private(set) var duplicateRequests = 0
    public private(set) var pingsReceived = 0
    public private(set) var batchesReceived = 0
    public private(set) var lastPosition: [String: Fix] = [:]
    private var statusLedger = IdempotencyLedger<TaskStatus>()
    private var batchIDs: Set<String> = []
    private var pingKeys: Set<String> = []

    public init(scenario: Scenario) {
        self.scenario = scenario
        tasks = Dictionary(uniqueKeysWithValues: scenario.tasks.map {
            ($0.id, TaskState(task: $0, otpAttemptsLeft: scenario.otpAttempts))
        })
    }

    public var uniquePings: Int { pingKeys.count }

    public func activeTasks(driverId: String) -> [TaskState] {
        tasks.values.filter { $0.task.driverId == driverId && !$0.task.status.isTerminal }.sorted { $0.task.id < $1.task.id }
    }

    public mutating func updateStatus(
        taskId: String, to status: TaskStatus, idempotencyKey: String, bodyDigest: String, at time: Double
    ) -> StatusOutcome {
        switch statusLedger.check(key: idempotencyKey, bodyDigest: bodyDigest) {
        case .replay(let first):
            duplicateRequests += 1
            return .replayed(first)
        case .conflict:
            return .keyReused
        case .new:
            break
        }
        guard var state = tasks[taskId] else { return .notFound }
        let current = state.task.status
        guard TaskWorkflow.isTransition(from: current, to: status) else { return .invalidTransition(current: current) }
        if status == .delivered && !state.podAccepted { return .podRequired(current: current) }
        state.task.status = status
        tasks[taskId] = state
        statusLedger.record(key: idempotencyKey, bodyDigest: bodyDigest, response: status)
        statusUpdates.append(StatusUpdate(taskId: taskId, status: status, idempotencyKey: idempotencyKey, time: time))
        return .applied(status)
    }

    public mutating func submitOTP(taskId: String, value: String) -> OTPOutcome {
        guard var state = tasks[taskId] else { return .notFound }
        guard state.task.podType == .otp, let expected = state.task.otp else { return .notOTPTask }
        if state.podAccepted { return .accepted }
        guard state.otpAttemptsLeft > 0 else { return .locked }
        if value == expected {
            state.podAccepted = true
            tasks[taskId] = state
            return .accepted
        }
        state.otpAttemptsLeft -= 1
        tasks[taskId] = state
        return state.otpAttemptsLeft > 0 ? .wrong(attemptsLeft: state.otpAttemptsLeft) : .locked
    }

    /// A photo proof was stored (the HTTP layer checks and hashes the upload).
    public mutating func acceptPhoto(taskId: String) -> Bool {
        guard var state = tasks[taskId], state.task.podType == .photo else { return false }
        state.podAccepted = true
        tasks[taskId] = state
        return true
    }

    /// Stores a batch of pings once per batch id; each ping counts once per (time, position).
    public mutating func ingest(batchId: String, driverId: String, pings: [Fix]) -> BatchOutcome {
        guard batchIDs.insert(batchId).inserted else {
            duplicateRequests += 1
            return .duplicate
        }
        batchesReceived += 1
        pingsReceived += pings.count
        var unique = 0
        for ping in pings where pingKeys.insert("\(driverId)|\(ping.time)|\(ping.latitude)|\(ping.longitude)").inserted {
            unique += 1
        }
        if let newest = pings.max(by: { $0.time < $1.time }), newest.time >= (lastPosition[driverId]?.time ?? -.infinity) {
            lastPosition[driverId] = newest
        }
        return .accepted(unique: unique)
    }

    /// Seconds to the task's next stop from the driver's last received position: great-circle distance over
    /// the scenario's speed. nil without a position or for a finished task.
    public func eta(taskId: String) -> Double? {
        guard let state = tasks[taskId], !state.task.status.isTerminal,
              let position = lastPosition[state.task.driverId]
        else { return nil }
        let heading: [TaskStatus] = [.assigned, .accepted, .arrivedAtStore]
        let stop = heading.contains(state.task.status) ? state.task.pickup : state.task.dropoff
        let metres = Geo.distance(latitude1: position.latitude, longitude1: position.longitude, latitude2: stop.lat, longitude2: stop.lng)
        return metres / scenario.etaSpeed
    }
}
