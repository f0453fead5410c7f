import ServiceLifecycle

/// The uplink as a service of the daemon's group: runs the send loop; on graceful shutdown, one last flush.
struct UplinkService: Service {
    let uplink: Uplink

    func run() async throws {
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await uplink.runWebSocket()
                    uplink.debug("WebSocket loop ended")
                }
                group.addTask {
                    await uplink.run()
                    uplink.debug("send loop ended")
                }
            }
        } onGracefulShutdown: {
            uplink.stop()
        }
        await uplink.client.shutdown()
        uplink.debug("HTTP client shut down")
    }
}
