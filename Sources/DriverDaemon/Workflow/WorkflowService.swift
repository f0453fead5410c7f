import DriverDomain
import Logging
import ServiceLifecycle

/// Keeps the route in step with the backend: a sync at start, after a push that changes tasks and when the
/// link comes back (retried with backoff while it fails), and the backend's ETA every 30 s en route.
struct WorkflowService: Service {
    let workflow: Workflow
    let logger: Logger
    static let etaInterval = 30.0
    /// Off shift, or parked with the ignition off, the ETA of the next stop waits for the van to move: the loop
    /// looks again this seldom (each look is a wake-up of a sleeping unit; the backend's ETA pushes still come).
    static let restingETAInterval = 600.0
    /// A failed sync is retried, 1 s doubling to a minute, even without a new reason.
    static let retryBackoff = Backoff(base: 1, cap: 60)

    func run() async throws {
        // Without a backend there is nothing to sync: no timer wakes the process for it.
        guard workflow.session != nil else {
            try? await gracefulShutdown()  // throws only when cancelled: a stop either way
            return
        }
        await cancelWhenGracefulShutdown {
            var failures = 0
            var nextETA = 0.0
            while !Task.isCancelled {
                let now = workflow.monotonic
                if await workflow.syncRequested {
                    do {
                        try await workflow.sync()
                        failures = 0
                    } catch {
                        failures += 1
                        logger.debug("task sync failed", metadata: ["error": "\(error)", "failures": "\(failures)"])
                    }
                }
                let etaInterval = await workflow.isResting ? Self.restingETAInterval : Self.etaInterval
                if now >= nextETA {
                    await workflow.refreshServerETA()
                    nextETA = now + etaInterval
                }
                nextETA = min(nextETA, now + etaInterval)
                let retry = failures > 0 ? Self.retryBackoff.ceiling(attempt: failures) : etaInterval
                if failures > 0 { await workflow.requestSyncQuietly() }
                await workflow.syncNeeded.wait(until: min(now + retry, nextETA))
            }
        }
    }
}

extension Workflow {
    /// Off shift, or parked with the ignition off: no ETA to refresh until the van moves.
    var isResting: Bool { !shift.isOn || tracker.uplinkCadence == .saver }

    /// Marks a sync as due without waking the loop (a retry after a failure).
    func requestSyncQuietly() { syncRequested = true }
}
