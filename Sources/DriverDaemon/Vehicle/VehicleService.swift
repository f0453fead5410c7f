import OBDKit
import ServiceLifecycle

/// The OBD-II reader's life in the service group: started with the daemon, stopped at shutdown.
struct VehicleService: Service {
    let reader: OBDReader

    func run() async throws {
        reader.start()
        try? await gracefulShutdown()  // throws only when cancelled: a stop either way
        reader.stop()
    }
}
