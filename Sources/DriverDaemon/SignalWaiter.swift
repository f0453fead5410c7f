#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM and SIGINT without libdispatch: the signals are blocked in every thread (call `blockShutdownSignals`
/// first thing in `main`, before any thread starts) and one thread waits for them in `sigwait`.
///
/// Why not swift-service-lifecycle's signal handling: it uses a dispatch signal source, and the first use of
/// libdispatch's worker pool arms a monitor that wakes the process every second for the rest of its life.
public enum SignalWaiter {
    static let shutdownSignals = [SIGTERM, SIGINT]

    /// Blocks SIGTERM and SIGINT in the calling thread and every thread it starts afterwards.
    public static func blockShutdownSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in shutdownSignals { sigaddset(&set, signal) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// The first SIGTERM or SIGINT, as a stream (from a waiting thread started now); a second SIGINT (an
    /// impatient Ctrl-C) exits at once, a second SIGTERM is ignored (systemd sends SIGKILL itself when its stop
    /// timeout runs out).
    static func signals() -> AsyncStream<Int32> {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        start { signal in
            continuation.yield(signal)
            continuation.finish()
        }
        return stream
    }

    private static func start(onFirst: @escaping @Sendable (Int32) -> Void) {
        final class Box: @unchecked Sendable {
            let handler: @Sendable (Int32) -> Void
            init(_ handler: @escaping @Sendable (Int32) -> Void) { self.handler = handler }
        }
        var thread = pthread_t()
        let box = Unmanaged.passRetained(Box(onFirst))
        pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            var set = sigset_t()
            sigemptyset(&set)
            for signal in SignalWaiter.shutdownSignals { sigaddset(&set, signal) }
            var received: Int32 = 0
            var count = 0
            while sigwait(&set, &received) == 0 {
                count += 1
                if count == 1 {
                    box.handler(received)
                } else if received == SIGINT {
                    _exit(128 + received)
                }
            }
            return nil
        }, box.toOpaque())
        pthread_detach(thread)
    }
}
