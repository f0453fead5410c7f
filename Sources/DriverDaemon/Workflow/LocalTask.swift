import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials

/// A task as the daemon holds it: the `task` row decoded, with the backend's task (stops, polyline) inside.
struct LocalTask: Sendable, Equatable {
    var status: TaskStatus
    var backendStatus: TaskStatus
    var sync: SyncState
    var pod: PODState
    var failureReason: FailureReason?
    /// The backend's task as last fetched (its status may be behind the local one).
    private(set) var detail: RiderTask
    /// `detail` as the task row stores it: encoded when it changes, not at every write of the row (every driver
    /// action and every answer writes it).
    private(set) var storedDetail: Data
    var updatedAt: Double

    var id: String { detail.id }

    init(backend task: RiderTask, now: Double) throws {
        status = task.status
        backendStatus = task.status
        sync = .synced
        pod = task.podAccepted ? .accepted : .none
        failureReason = task.failureReason
        detail = task
        storedDetail = Data(try Codec.encode(task))
        updatedAt = now
    }

    /// The backend's task anew, encoded for the row now: throws rather than keep a detail the row cannot hold.
    mutating func setDetail(_ task: RiderTask) throws {
        storedDetail = Data(try Codec.encode(task))
        detail = task
    }

    init(record: TaskRecord) throws {
        detail = try Codec.decode(RiderTask.self, from: record.detail)
        storedDetail = record.detail
        status = try Self.decode(TaskStatus.self, record.status)
        backendStatus = try Self.decode(TaskStatus.self, record.backendStatus)
        sync = try Self.decode(SyncState.self, record.syncState)
        pod = try Self.decode(PODState.self, record.podState)
        failureReason = try record.failureReason.map { try Self.decode(FailureReason.self, $0) }
        updatedAt = record.updatedAt
    }

    var record: TaskRecord {
        TaskRecord(
            id: id, status: status.rawValue, backendStatus: backendStatus.rawValue, syncState: sync.rawValue,
            podType: detail.podType.rawValue, podState: pod.rawValue, failureReason: failureReason?.rawValue,
            detail: storedDetail, updatedAt: updatedAt)
    }

    struct CorruptRow: Error, CustomStringConvertible {
        let description: String
    }

    private static func decode<T: RawRepresentable<String>>(_ type: T.Type, _ raw: String) throws -> T {
        guard let value = T(rawValue: raw) else { throw CorruptRow(description: "unknown \(T.self) '\(raw)' in the task table") }
        return value
    }

    func stop(_ kind: StopKind) -> Stop? { detail.stops.first { $0.kind == kind } }

    func stopView(_ stop: Stop, isNext: Bool) -> StopView {
        StopView(
            id: stop.id, taskId: id, kind: stop.kind, status: RouteRules.stopStatus(stop.kind, task: status, isNext: isNext),
            address: stop.address, name: stop.name, phone: stop.phone, lat: stop.lat, lng: stop.lng)
    }

    func view(nextStopId: String?) -> TaskView {
        TaskView(
            id: id, status: status, backendStatus: backendStatus, sync: sync, podType: detail.podType.rawValue, pod: pod,
            failureReason: failureReason, allowedActions: TaskWorkflow.allowedActions(status, podCaptured: pod.allowsDelivery),
            primaryAction: TaskWorkflow.primaryAction(status, podCaptured: pod.allowsDelivery),
            stops: detail.stops.map { stopView($0, isNext: $0.id == nextStopId) }, updatedAt: updatedAt)
    }
}
