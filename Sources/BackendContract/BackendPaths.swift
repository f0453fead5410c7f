/// The backend contract's paths and headers (docs/backend-openapi.yaml). Task ids are path segments, so the
/// contract restricts them to letters, digits, '.', '_' and '-'.
public enum BackendPaths {
    public static let apiPrefix = "/api/v1"
    public static let login = "/api/v1/auth/login"
    public static let refresh = "/api/v1/auth/refresh"
    public static let activeTasks = "/api/v1/rider/tasks/active"
    public static let locations = "/api/v1/rider/locations"
    public static let pushes = "/api/v1/rider/pushes"
    public static let route = "/api/v1/rider/route"
    public static let visits = "/api/v1/rider/visits"
    public static let trips = "/api/v1/rider/trips"
    public static let idles = "/api/v1/rider/idles"
    public static let harshEvents = "/api/v1/rider/harsh-events"
    public static let sos = "/api/v1/rider/sos"
    public static let vehicleEvents = "/api/v1/rider/vehicle-events"
    public static let config = "/api/v1/rider/config"
    public static let configAcks = "/api/v1/rider/config/acks"
    public static let release = "/api/v1/rider/release"
    public static let releaseAcks = "/api/v1/rider/release/acks"
    public static let requestAcks = "/api/v1/rider/requests/acks"
    public static let webSocket = "/api/v1/rider/ws"
    /// The WebSocket's upgrade with the last push id the client has seen: the backend starts the catch-up (as a `hello`
    /// would) and says so in `pushCatchUpHeader`, so a reconnect on a lossy link costs one message, not two.
    public static func webSocket(lastPushId: Int) -> String { "\(webSocket)?\(lastPushIdQuery)=\(max(0, lastPushId))" }
    public static let lastPushIdQuery = "lastPushId"
    /// On a 101 answer: the catch-up after this push id has started, and no `hello` is needed (a backend without it
    /// waits for the `hello`).
    public static let pushCatchUpHeader = "Push-Catch-Up"
    /// The unit's health report (`UnitHealthReport`), with an `Idempotency-Key` (its id).
    public static let health = "/api/v1/rider/health"
    /// The office's view of every unit's newest report, units needing attention first (`FleetHealthView`).
    public static let fleetHealth = "/api/v1/fleet/health"
    /// A unit's enrolment: a fleet's claim token and a CSR for the unit's own key (the one path a unit without a
    /// certificate may call on a backend that asks for one).
    public static let enrol = "/api/v1/units/enrol"
    /// A certificate's renewal, proven by the same key (open without a client certificate, as the enrolment).
    public static let renew = "/api/v1/units/renew"

    public static func taskStatus(_ taskId: String) -> String { "/api/v1/rider/tasks/\(taskId)/status" }
    public static func taskPOD(_ taskId: String) -> String { "/api/v1/rider/tasks/\(taskId)/pod" }
    public static func taskETA(_ taskId: String) -> String { "/api/v1/rider/tasks/\(taskId)/eta" }
    public static func diagnosticChunk(_ requestId: String, index: Int, count: Int, sha256: String) -> String {
        "/api/v1/rider/diagnostics/\(requestId)/chunks/\(index)?count=\(count)&sha256=\(sha256)"
    }

    /// One chunk of a release's package, by the package's SHA-256 (`ReleaseManifest.chunks`).
    public static func releaseChunk(_ sha256: String, index: Int) -> String { "/api/v1/rider/release/\(sha256)/chunks/\(index)" }

    public static let idempotencyKeyHeader = "Idempotency-Key"
    /// Set on an answer that repeats the first answer given for an idempotency key.
    public static let idempotentReplayHeader = "Idempotent-Replayed"

    /// Whether `id` may be used as a task id (and so as a path segment).
    public static func isValidTaskID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64 && id.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "_" || $0 == "-"
        }
    }
}
