#if canImport(Glibc)
import Glibc
#endif
import Logging
import ServiceLifecycle

/// Waits for SIGTERM or SIGINT (from `SignalWaiter`, without libdispatch) and returns: configured to end the
/// group gracefully when it does, it is how a stop request reaches every service.
struct SignalService: Service {
    let signals: AsyncStream<Int32>
    let logger: Logger

    func run() async {
        await cancelWhenGracefulShutdown {
            for await signal in signals {
                let name = signal == SIGTERM ? "SIGTERM" : signal == SIGINT ? "SIGINT" : "signal \(signal)"
                logger.notice(
                    "stopping on \(name): finishing requests, committing the last pings, flushing the outbox",
                    metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.stopping.rawValue)"])
                return
            }
        }
    }
}
