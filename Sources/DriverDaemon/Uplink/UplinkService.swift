import ServiceLifecycle

/// The uplink as a service of the daemon's group: runs the send loop; on graceful shutdown, one last flush.
struct UplinkService: Service {
    let uplink: Uplink

    func run() async throws {
        await withGracefulShutdownHandler {
            await uplink.run()
        } onGracefulShutdown: {
            uplink.stop()
        }
        await uplink.client.shutdown()
    }
}
