import BackendContract
import DriverDomain

/// The dispatcher's side (`/sim/`): each change becomes a push to the driver.
extension SimWorld {
    public mutating func assign(_ task: Scenario.Task, now: Double) -> Result<Push, SimRefusal> {
        guard BackendPaths.isValidTaskID(task.id) else { return .failure(SimRefusal(.badRequest, "task id: only letters, digits, '.', '_' and '-'")) }
        guard tasks[task.id] == nil else { return .failure(SimRefusal(.badRequest, "task \(task.id) exists")) }
        guard driver(id: task.driverId) != nil else { return .failure(SimRefusal(.notFound, "no driver \(task.driverId)")) }
        if task.podType == .otp, !(task.otp.map(Scenario.isOTP) ?? false) {
            return .failure(SimRefusal(.badRequest, "an OTP task needs a 4-digit otp"))
        }
        var task = task
        task.status = .assigned
        let record = TaskRecord(task: task, otpAttemptsLeft: otpAttempts, updatedAt: now)
        tasks[task.id] = record
        taskOrder.append(task.id)
        return .success(push(.taskAssigned, driverId: task.driverId, taskId: task.id, task: riderTask(record), sequence: sequence(driverId: task.driverId), now: now))
    }

    public mutating func cancel(taskId: String, now: Double) -> Result<Push, SimRefusal> {
        guard var record = tasks[taskId] else { return .failure(SimRefusal(.notFound, "no task \(taskId)")) }
        guard !record.task.status.isTerminal else {
            return .failure(SimRefusal(.invalidTransition, "task \(taskId) is \(record.task.status.rawValue)"))
        }
        record.task.status = .cancelled
        record.updatedAt = now
        tasks[taskId] = record
        return .success(push(.taskCancelled, driverId: record.task.driverId, taskId: taskId, task: riderTask(record), now: now))
    }

    /// A new drop-off and/or route line for a task.
    public mutating func changeRoute(
        taskId: String, dropoff: Scenario.Place?, waypoints: [Scenario.Waypoint]?, now: Double
    ) -> Result<Push, SimRefusal> {
        guard var record = tasks[taskId] else { return .failure(SimRefusal(.notFound, "no task \(taskId)")) }
        guard !record.task.status.isTerminal else {
            return .failure(SimRefusal(.invalidTransition, "task \(taskId) is \(record.task.status.rawValue)"))
        }
        if let dropoff { record.task.dropoff = dropoff }
        if let waypoints { record.task.waypoints = waypoints }
        record.updatedAt = now
        tasks[taskId] = record
        let driverId = record.task.driverId
        return .success(push(.routeChanged, driverId: driverId, taskId: taskId, task: riderTask(record), sequence: sequence(driverId: driverId), now: now))
    }

    /// A new stop order. From the dispatcher it is pushed; from the driver (`PUT /api/v1/rider/route`) it is
    /// the answer.
    public mutating func resequence(driverId: String, to order: [String], byDispatcher: Bool, now: Double) -> Result<[String], SimRefusal> {
        guard driver(id: driverId) != nil else { return .failure(SimRefusal(.notFound, "no driver \(driverId)")) }
        let current = sequence(driverId: driverId)
        if let problem = RouteRules.sequenceProblem(order, current: current, parse: Stop.parse) {
            return .failure(SimRefusal(.invalidSequence, problem))
        }
        sequences[driverId] = order
        if byDispatcher { _ = push(.routeChanged, driverId: driverId, sequence: order, now: now) }
        return .success(order)
    }

    public mutating func message(driverId: String, taskId: String?, text: String, now: Double) -> Result<Push, SimRefusal> {
        guard driver(id: driverId) != nil else { return .failure(SimRefusal(.notFound, "no driver \(driverId)")) }
        if let taskId, record(taskId: taskId, driverId: driverId) == nil {
            return .failure(SimRefusal(.notFound, "no task \(taskId) for \(driverId)"))
        }
        return .success(push(.customerMessage, driverId: driverId, taskId: taskId, message: text, now: now))
    }

    /// The newest push (the dispatcher's resequence records one without returning it).
    public func lastPush(driverId: String) -> Push? { pushLog[driverId]?.last }
}
