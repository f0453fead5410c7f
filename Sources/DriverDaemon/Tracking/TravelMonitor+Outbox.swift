import BackendClient
import BackendContract
import DriverAPI
import DriverStore

/// The travel monitor owns the activity lane: trips, idle periods and harsh-driving events, each marked sent
/// once the backend has it.
extension TravelMonitor: OutboxItemOwner {
    static let ownedKinds: [OutboxItemRecord.Kind] = [.trip, .idle, .harsh]

    /// Sends the activity lane.
    func attach(to uplink: Uplink) {
        uplink.register(self, for: Self.ownedKinds)
    }

    func send(_ item: OutboxItemRecord, with client: any BackendAPI, token: String) async throws -> TaskStatus? {
        let path = switch item.kind {
        case .trip: BackendPaths.trips
        case .idle: BackendPaths.idles
        case .harsh: BackendPaths.harshEvents
        default:  // another owner's: never handed here (`attach(to:)` registers these three)
            throw BackendClientError.unexpected("the travel monitor does not send \(item.kind.rawValue) items")
        }
        _ = try await client.postActivity(path: path, body: item.payload, idempotencyKey: item.idempotencyKey, token: token)
        return nil
    }

    func acknowledged(_ item: OutboxItemRecord, applied: TaskStatus?) async {
        if item.kind == .trip || item.kind == .idle { _ = logger.valueOrLog("marking \(item.idempotencyKey) sent") { try book.markSent(id: item.idempotencyKey) } }
    }
}
