import BackendClient
import DriverAPI
import DriverStore

/// The visits own their reports' kind: each sent once; the backend's ack marks the visit sent.
extension StopVisits: OutboxItemOwner {
    func attach(to uplink: Uplink) {
        uplink.register(self, for: [.visit])
    }

    func send(_ item: OutboxItemRecord, with client: any BackendAPI, token: String) async throws -> TaskStatus? {
        _ = try await client.postVisit(body: item.payload, idempotencyKey: item.idempotencyKey, token: token)
        return nil
    }

    func acknowledged(_ item: OutboxItemRecord, applied: TaskStatus?) async {
        _ = logger.valueOrLog("marking \(item.idempotencyKey) sent") { try book.markSent(id: item.idempotencyKey) }
    }
}
