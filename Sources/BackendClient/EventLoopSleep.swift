import NIOCore
import NIOPosix

/// `Task.sleep` on a NIO event loop timer. The runtime's own sleep goes through libdispatch (the global-executor
/// hook that puts tasks on NIO does not cover delayed jobs), whose worker pool, once started, wakes the process
/// every second for the rest of its life. Every sleep in the daemon goes through here.
public enum EventLoopSleep {
    public static func sleep(for duration: Duration) async throws {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        let scheduled = MultiThreadedEventLoopGroup.singleton.next().scheduleTask(in: .nanoseconds(nanoseconds)) {}
        try await withTaskCancellationHandler {
            try await scheduled.futureResult.get()
        } onCancel: {
            scheduled.cancel()
        }
    }
}
