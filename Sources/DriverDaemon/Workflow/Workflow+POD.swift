import BackendContract
import DriverAPI
import DriverDomain
import DriverStore

extension Workflow {
    /// A task can be proved delivered once its goods are on board (the backend's rule too).
    static let provable: Set<TaskStatus> = [.pickedUp, .arrivedAtDestination]

    /// The task a proof names (or the next stop's), if it is proved by `type` and its goods are on board.
    func provableTask(_ taskId: String?, type: PODType) throws -> LocalTask {
        let task = try resolve(taskId)
        try Self.checkProvable(task, type: type)
        return task
    }

    private static func checkProvable(_ task: LocalTask, type: PODType) throws {
        guard task.detail.podType == type else {
            throw APIError(.actionRefused, "task \(task.id) is proved by \(task.detail.podType == .otp ? "the customer's code (pod otp)" : "a photo (pod photo)")")
        }
        guard provable.contains(task.status) else {
            throw APIError(.actionRefused, "proof of delivery comes once the goods are picked up; task \(task.id) is \(task.status.rawValue)",
                data: .object(["current": .string(task.status.rawValue)]))
        }
    }

    /// A proof taken (`item` queues it for the backend) or accepted by the backend, committed as every driver's change
    /// is. A proof still to be sent is checked again against the task as it is now (a sync may have moved it meanwhile);
    /// one the backend accepted is the backend's word.
    func recordProof(_ taskId: String, type: PODType, pod: PODState, item: OutboxItemRecord?) async throws -> TaskView {
        guard var task = tasks[taskId] else { throw APIError(.notFound, "no task \(taskId) on this unit") }
        if pod != .accepted { try Self.checkProvable(task, type: type) }
        task.pod = pod
        if item != nil { task.sync = .pending }
        task.updatedAt = now()
        return view(try await commitDriverChange(task, item: item))
    }
}
