import BackendClient
import BackendContract
import DriverAPI
import DriverStore

/// The vehicle monitor owns the vehicle lane: fault codes and the battery report, each sent once.
extension VehicleMonitor {
    func attach(to uplink: Uplink) {
        uplink.register(.vehicle, .posting(to: BackendPaths.vehicleEvents))
    }
}
