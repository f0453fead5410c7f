/// `GET /api/v1/rider/tasks/{taskId}/eta`: time to the task's next stop from the last position the backend
/// received. `etaSeconds` is null until the backend has a position.
public struct ETAResponse: Codable, Sendable, Equatable {
    public var taskId: String
    public var stopId: String
    public var etaSeconds: Double?
    public var distanceMeters: Double?
    /// Unix seconds of the position the estimate starts from.
    public var positionTimestamp: Double?
    public var computedAt: Double

    public init(taskId: String, stopId: String, etaSeconds: Double?, distanceMeters: Double?, positionTimestamp: Double?, computedAt: Double) {
        self.taskId = taskId
        self.stopId = stopId
        self.etaSeconds = etaSeconds
        self.distanceMeters = distanceMeters
        self.positionTimestamp = positionTimestamp
        self.computedAt = computedAt
    }
}
