#if canImport(Glibc)
import Glibc
#endif
import CTimex
import NIOCore
import NIOPosix

/// Where the daemon's time comes from: the system's clocks and timers on a unit, a virtual time that tests
/// advance by hand in-process. Everything that reads a clock or waits for a deadline goes through the daemon's
/// `DaemonClock`, which holds one.
protocol TimeBase: Sendable {
    /// Seconds that never step and count suspend (CLOCK_BOOTTIME on the system).
    var monotonic: Double { get }
    /// The system clock, unix seconds: stamps come from it while it is synchronised.
    var wall: Double { get }
    /// Whether the kernel says the system clock is synchronised.
    var wallSynchronized: Bool { get }
    /// Calls `action` once `monotonic` reaches `deadline`, unless cancelled first.
    func schedule(at deadline: Double, _ action: @escaping @Sendable () -> Void) -> TimerHandle
}

/// A timer scheduled on a `TimeBase`.
struct TimerHandle: Sendable {
    let cancel: @Sendable () -> Void
}

/// The unit's own clocks, and timers on NIO's event loops (no libdispatch: see `EventLoopSleep`).
struct SystemTime: TimeBase {
    var monotonic: Double {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    var wall: Double { WallClock.now() }

    /// A failed read (a seccomp filter) counts as not synchronised.
    var wallSynchronized: Bool { ctimex_synchronized(nil) == 1 }

    func schedule(at deadline: Double, _ action: @escaping @Sendable () -> Void) -> TimerHandle {
        let nanoseconds = Int64(max(0, deadline - monotonic) * 1e9)
        let scheduled = MultiThreadedEventLoopGroup.singleton.next().scheduleTask(in: .nanoseconds(nanoseconds)) { action() }
        return TimerHandle { scheduled.cancel() }
    }
}

extension TimeBase {
    /// Returns once `seconds` have passed on this time base; throws if the task is cancelled first.
    func sleep(for seconds: Double) async throws {
        let timer = Wakeup(time: self)
        await timer.wait(until: monotonic + seconds)
        try Task.checkCancellation()
    }
}
