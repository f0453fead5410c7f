#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A pipe that wakes a reader's thread from another thread (a control change, a stop): non-blocking, close-on-exec.
/// The reader sleeps in `wait`, on the pipe and optionally on its device or socket, never longer than it must.
public final class WakePipe: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32

    public init() {
        var fds: [Int32] = [0, 0]
        pipe(&fds)
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        (readEnd, writeEnd) = (fds[0], fds[1])
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    public func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Sleeps up to `seconds` (nil: no limit) or until `wake()`, or until `readable` has data: returns whether it has.
    @discardableResult
    public func wait(readable descriptor: Int32? = nil, seconds: Double?) -> Bool {
        var fds = [pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)]
        if let descriptor { fds.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)) }
        let milliseconds = seconds.map { Int32(min(Double(Int32.max), max(0, $0 * 1000).rounded(.up))) } ?? -1
        while poll(&fds, nfds_t(fds.count), milliseconds) < 0 && errno == EINTR {}
        if fds[0].revents != 0 {
            var buffer = [UInt8](repeating: 0, count: 64)
            while read(readEnd, &buffer, buffer.count) > 0 {}
        }
        return fds.count > 1 && fds[1].revents != 0
    }
}

/// Runs `body` on a detached thread of its own, named `name` in top, perf and /proc (it would inherit its
/// creator's, an event loop's): blocking C calls never touch the Swift concurrency pool.
public func startThread(named name: String, _ body: @escaping @Sendable () -> Void) {
    final class Box {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    var thread = pthread_t()
    let box = Unmanaged.passRetained(Box(name: name, body: body))
    pthread_create(&thread, nil, { raw in
        let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        if fd >= 0 {
            _ = box.name.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, min(15, $0.count - 1)) }
            close(fd)
        }
        box.body()
        return nil
    }, box.toOpaque())
    pthread_detach(thread)
}

/// CLOCK_MONOTONIC, seconds.
public func monotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// A reader's thread, started once, and its stop: the flags both readers keep, and the pipe that wakes the thread
/// for a stop or a control change.
public final class ReaderRunner: Sendable {
    public let wakePipe: WakePipe
    private let flags = Mutex(Flags())

    private struct Flags {
        var started = false
        var stopping = false
        var ended = false
        var endWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// - Parameter wakePipe: the pipe the thread sleeps on; given when others must wake it too (the tracking
    ///   pipeline's inbox wakes the GPS reader's thread with it).
    public init(wakePipe: WakePipe = WakePipe()) { self.wakePipe = wakePipe }

    /// Runs `body` on a thread named `name`, the first time only.
    public func start(named name: String, _ body: @escaping @Sendable () -> Void) {
        let first = flags.withLock { flags in
            defer { flags.started = true }
            return !flags.started
        }
        guard first else { return }
        startThread(named: name) { [self] in
            body()
            let waiters = flags.withLock { flags in
                flags.ended = true
                defer { flags.endWaiters = [] }
                return flags.endWaiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Asks the thread to end: it sees `isStopping` at its next wake-up, which this causes.
    public func stop() {
        flags.withLock { $0.stopping = true }
        wakePipe.wake()
    }

    public var isStopping: Bool { flags.withLock { $0.stopping } }

    /// Returns once the thread's body has returned (at once if it never started): what it did last is done. (A stop
    /// that did not wait let a final flush run while the thread still handled a fix: a graceful stop lost the ping
    /// that fix made.)
    public func ended() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let now = flags.withLock { flags in
                guard flags.started, !flags.ended else { return true }
                flags.endWaiters.append(waiter)
                return false
            }
            if now { waiter.resume() }
        }
    }
}

/// A value that one thread alone reads and writes (the one that touches it first), without a lock: what swift-nio's
/// `NIOLoopBound` is to an event loop, for a thread of our own. Debug builds check every access is on that thread.
public final class ThreadOwned<Value>: @unchecked Sendable {
    private var value: Value
    #if DEBUG
    private var owner: pthread_t?
    #endif

    public init(_ value: Value) { self.value = value }

    /// Runs `body` on the value; only ever on the owning thread.
    public func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        #if DEBUG
        let current = pthread_self()
        if let owner {
            precondition(pthread_equal(owner, current) != 0, "a thread-owned value touched off its thread")
        } else {
            owner = current
        }
        #endif
        return try body(&value)
    }
}
