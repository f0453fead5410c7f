import CConcurrencyHook
import NIOCore
import NIOPosix

/// Swift Concurrency's jobs on NIO's event loops instead of libdispatch's worker pool, whose monitor wakes the
/// process every second, forever, once anything has used it: a unit standing still cannot afford that.
///
/// SwiftNIO's `unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()` finds the runtime's hook
/// with `dlsym`, which works when the Swift runtime is a shared library and silently fails in the package's static
/// binary (`--static-swift-stdlib` hides the runtime's symbols), where every task then ran on libdispatch. Here the
/// hook's address comes from the linker, so both builds take the same path. Call once, first thing in `main`.
enum ConcurrencyOnNIO {
    /// The hook's type, as SwiftNIO declares it: the job and the runtime's original enqueue.
    private typealias EnqueueGlobalHook = @convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void

    /// false when another hook was installed first (then libdispatch's pool runs the tasks).
    static func install() -> Bool {
        let slot = driverd_swift_task_enqueueGlobal_hook()
        guard slot.pointee == nil else { return false }
        let enqueueOnNIO: EnqueueGlobalHook = { job, _ in
            // `any()` is sticky: a job enqueued from an event loop of the group stays on that loop.
            MultiThreadedEventLoopGroup.singleton.any().enqueue(ExecutorJob(job))
        }
        // As SwiftNIO does: the thin function's pointer, stored where the runtime reads it.
        withUnsafePointer(to: enqueueOnNIO) { pointer in
            pointer.withMemoryRebound(to: UnsafeMutableRawPointer.self, capacity: 1) { slot.pointee = $0.pointee }
        }
        return true
    }
}
