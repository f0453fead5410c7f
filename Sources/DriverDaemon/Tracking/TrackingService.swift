#if canImport(Glibc)
import Glibc
#endif
import GPSKit
import ReaderThread
import ServiceLifecycle

/// The GPS thread's life in the service group: start it, and on shutdown stop it and commit the last pings.
/// The power inputs are re-read on that thread (`TrackingPipeline.housekeeping`), not on a timer here.
/// Without a reader (fixes handed in by an in-process test) the thread is the pipeline's own.
struct TrackingService: Service {
    let reader: GPSDReader?
    let pipeline: TrackingPipeline

    func run() async throws {
        pipeline.submit(.readPower)
        let ownThread = reader == nil ? pipeline.startOwnThread() : nil
        reader?.start()
        try? await gracefulShutdown()  // throws only when cancelled: a stop either way
        reader?.stop()
        ownThread?.stop()
        // The final flush, once the GPS thread has ended: nothing sampled is lost on a graceful stop, and it is
        // all in the database. (Flushed while the thread still handled a fix, the ping of that fix stayed in memory:
        // a 1,000-cut soak lost one so, at a stop to apply a configuration.)
        await reader?.ended()
        await ownThread?.ended()
        pipeline.recorder?.flushIntoStore()
    }
}
