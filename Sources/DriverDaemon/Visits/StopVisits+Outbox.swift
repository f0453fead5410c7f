import BackendClient
import DriverAPI
import DriverStore

/// The visits own their reports' kind: each sent once; the backend's ack marks the visit sent.
extension StopVisits {
    func attach(to uplink: Uplink) {
        uplink.register(.visit, OutboxKindHandler(
            send: { item, client, token in
                _ = try await client.postVisit(body: item.payload, idempotencyKey: item.idempotencyKey, token: token)
                return nil
            },
            acknowledged: { [self] item, _ in markSent(item) }))
    }

    private func markSent(_ item: OutboxItemRecord) {
        _ = logger.valueOrLog("marking \(item.idempotencyKey) sent") { try book.markSent(id: item.idempotencyKey) }
    }
}
