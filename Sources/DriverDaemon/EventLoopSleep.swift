import NIOCore
import NIOPosix

/// `Task.sleep` on a NIO event loop timer. The runtime's own sleep goes through libdispatch, whose worker
/// pool, once started, wakes the process every second (see `SignalWaiter`).
enum EventLoopSleep {
    static func sleep(for duration: Duration) async throws {
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
