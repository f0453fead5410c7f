import BackendClient
import Logging
import ServiceLifecycle
import SystemdKit

/// Talks to systemd: `READY=1` once the socket is bound, `STATUS=` kept current, `WATCHDOG=1` at half the
/// watchdog interval, `STOPPING=1` the moment a graceful shutdown begins.
///
/// Not under systemd, it does nothing and never wakes up.
struct NotifierService: Service {
    let notifier: ServiceNotifier
    let readiness: Readiness
    let logger: Logger
    /// The one-line summary for `STATUS=`.
    let statusText: @Sendable () -> String
    /// How often the status line is refreshed when no watchdog sets the pace.
    var statusRefresh: Duration = .seconds(30)

    func run() async throws {
        guard notifier.isSupervised else {
            try? await gracefulShutdown()  // throws only when cancelled: a stop either way
            return
        }
        await withGracefulShutdownHandler {
            try? await cancelWhenGracefulShutdown { try await supervise() }  // throws only the cancellation that ends it
        } onGracefulShutdown: {
            send(.stopping)
        }
    }

    private func supervise() async throws {
        await readiness.waitUntilListening()
        var lastStatus = currentStatus()
        send(.ready, .status(lastStatus))
        // Unreadable (a malformed WATCHDOG_USEC): no pings, and the journal says why systemd will stop the unit.
        let watchdog = logger.valueOrLog("reading systemd's watchdog interval") { try notifier.watchdogInterval() } ?? nil
        let tick = watchdog.map { $0 / 2 } ?? statusRefresh
        while true {
            try await EventLoopSleep.sleep(for: tick)
            if watchdog != nil { send(.watchdog) }
            let status = currentStatus()
            if status != lastStatus {
                send(.status(status))
                lastStatus = status
            }
        }
    }

    private func currentStatus() -> String { statusText() }

    private func send(_ states: ServiceNotifier.State...) {
        do {
            try notifier.notify(states)
        } catch {
            logger.warning("sd_notify failed", metadata: ["error": "\(error)"])
        }
    }
}
