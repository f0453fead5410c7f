import JSONRPC
import Logging
import ServiceLifecycle

/// Serves the local API until graceful shutdown, then closes every connection and removes its socket file.
struct RPCService: Service {
    let server: RPCServer
    let listener: RPCListener
    let readiness: Readiness
    let socketPath: String
    let logger: Logger

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                try await server.run(listener: listener) {
                    readiness.markListening()
                    logger.info(
                        "listening on \(socketPath)",
                        metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.listening.rawValue)", "socket": "\(socketPath)"])
                }
            }
        } catch where Task.isShuttingDownGracefully || Task.isCancelled {
            // The end of serving is the point of a shutdown, not a failure.
        }
    }
}
