import BackendClient
#if canImport(Glibc)
import Glibc
#endif
import GPSKit
import ServiceLifecycle

/// The GPS reader's life in the service group: start it, re-read the power inputs now and then, and on
/// shutdown stop it and commit the last pings.
struct TrackingService: Service {
    let reader: GPSDReader
    let pipeline: TrackingPipeline
    /// How often the power inputs are re-read when no fix brings the chance sooner.
    var powerPollInterval: Duration = .seconds(60)

    func run() async throws {
        pipeline.refreshPower()
        reader.start()
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await EventLoopSleep.sleep(for: powerPollInterval)
                if !Task.isCancelled { pipeline.refreshPower() }
            }
        }
        reader.stop()
        // The final flush: nothing sampled is lost on a graceful stop.
        pipeline.recorder?.flush()
    }
}
