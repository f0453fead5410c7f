import BackendClient
import BackendContract
import DriverAPI
import DriverStore

/// The vehicle monitor owns the vehicle lane: fault codes and the battery report, each sent once.
extension VehicleMonitor: OutboxItemOwner {
    func attach(to uplink: Uplink) {
        uplink.register(self, for: [.vehicle])
    }

    func send(_ item: OutboxItemRecord, with client: any BackendAPI, token: String) async throws -> TaskStatus? {
        _ = try await client.postActivity(path: BackendPaths.vehicleEvents, body: item.payload, idempotencyKey: item.idempotencyKey, token: token)
        return nil
    }
}
