import BackendClient
import BackendContract
import DriverAPI
import DriverStore

/// The travel monitor owns the activity lane: trips, idle periods and harsh-driving events, each sent once; a trip's
/// and an idle period's ack marks it sent.
extension TravelMonitor {
    func attach(to uplink: Uplink) {
        uplink.register(.trip, .posting(to: BackendPaths.trips, acknowledged: { [self] item, _ in markSent(item) }))
        uplink.register(.idle, .posting(to: BackendPaths.idles, acknowledged: { [self] item, _ in markSent(item) }))
        uplink.register(.harsh, .posting(to: BackendPaths.harshEvents))
    }

    private func markSent(_ item: OutboxItemRecord) {
        _ = logger.valueOrLog("marking \(item.idempotencyKey) sent") { try book.markSent(id: item.idempotencyKey) }
    }
}
