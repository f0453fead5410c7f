#if canImport(Glibc)
import Glibc
#endif
import DriverAPI
import DriverDomain
import Synchronization

/// Reads gpsd through libgps on a thread of its own (blocking C calls never touch the Swift concurrency
/// pool) and publishes link states and fixes as an `AsyncStream`.
///
/// gpsd may be absent at start, die, restart or lose the fix: the reader reports each state and reconnects
/// with jittered backoff, forever, until `stop()`. To save power a consumer can `pause` it between samples:
/// gpsd then sends nothing (or releases the receiver), and this thread sleeps without waking.
public final class GPSDReader: Sendable {
    public let endpoint: GPSDEndpoint
    public let events: AsyncStream<GPSEvent>
    private let continuation: AsyncStream<GPSEvent>.Continuation
    private let backoff: Backoff
    private let control = Mutex(Control())
    /// A pipe that wakes the thread when `control` changes.
    private let wakeRead: Int32
    private let wakeWrite: Int32

    private struct Control {
        var stopping = false
        /// Wall-clock deadline (CLOCK_MONOTONIC seconds) until which to stay quiet, and whether to release.
        var pausedUntil: Double?
        var release = false
        var started = false
    }

    public init(endpoint: GPSDEndpoint, backoff: Backoff = Backoff(base: 0.5, cap: 10)) {
        self.endpoint = endpoint
        self.backoff = backoff
        (events, continuation) = AsyncStream.makeStream(of: GPSEvent.self, bufferingPolicy: .bufferingNewest(256))
        var fds: [Int32] = [0, 0]
        pipe(&fds)
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        (wakeRead, wakeWrite) = (fds[0], fds[1])
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    /// Starts the reader thread (once).
    public func start() {
        let first = control.withLock { control in
            defer { control.started = true }
            return !control.started
        }
        guard first else { return }
        var thread = pthread_t()
        let box = Unmanaged.passRetained(self)
        pthread_create(&thread, nil, { raw in
            let reader = Unmanaged<GPSDReader>.fromOpaque(raw!).takeRetainedValue()
            reader.run()
            return nil
        }, box.toOpaque())
        pthread_detach(thread)
    }

    /// Stops the thread; the stream finishes.
    public func stop() {
        control.withLock { $0.stopping = true }
        wake()
    }

    /// Stay quiet for `seconds` (wall time), then deliver the next fix. `release` lets gpsd close the device.
    public func pause(for seconds: Double, release: Bool) {
        control.withLock {
            $0.pausedUntil = Self.monotonicNow() + seconds
            $0.release = release
        }
        wake()
    }

    /// Back to streaming at once (a rate request, a mode change).
    public func resume() {
        control.withLock { $0.pausedUntil = nil }
        wake()
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    private func drainWake() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &buffer, buffer.count) > 0 {}
    }

    private var isStopping: Bool { control.withLock { $0.stopping } }

    // MARK: - The thread

    private func run() {
        var attempt = 0
        var generator = SystemRandomNumberGenerator()
        while !isStopping {
            continuation.yield(.link(.connecting))
            let connection = GPSDConnection()
            do {
                try connection.open(endpoint)
                try connection.set(.streaming)
                attempt = 0
                continuation.yield(.link(.connected))
                try serve(connection)
            } catch {
                continuation.yield(.link(.lost))
            }
            connection.close()
            guard !isStopping else { break }
            let delay = backoff.delay(attempt: attempt, random: Double.random(in: 0..<1, using: &generator))
            attempt += 1
            // At least 100 ms, so a gpsd that accepts and drops at once cannot make this spin.
            sleepOrWake(seconds: max(0.1, delay))
        }
        continuation.finish()
    }

    /// Reads reports until gpsd goes away or the reader stops.
    private func serve(_ connection: GPSDConnection) throws(GPSDError) {
        var lastLink = GPSLinkState.connected
        var watch = GPSDConnection.Watch.streaming
        func publish(_ state: GPSLinkState) {
            if state != lastLink {
                lastLink = state
                continuation.yield(.link(state))
            }
        }
        while true {
            let (stopping, pausedUntil, release) = control.withLock { ($0.stopping, $0.pausedUntil, $0.release) }
            if stopping { return }
            let now = Self.monotonicNow()
            if let pausedUntil, pausedUntil > now {
                let quiet: GPSDConnection.Watch = release ? .released : .quiet
                if watch != quiet {
                    try connection.set(quiet)
                    watch = quiet
                }
                sleepOrWake(seconds: pausedUntil - now)
                // Whatever gpsd sent before it went quiet is stale now.
                while connection.waiting(microseconds: 0) { _ = try connection.read() }
                continue
            }
            if pausedUntil != nil { control.withLock { $0.pausedUntil = nil } }
            if watch != .streaming {
                try connection.set(.streaming)
                watch = .streaming
            }
            // Block on gpsd's socket and the wake pipe; no timeout, so an idle receiver costs no wakeups.
            guard waitReadable(connection.descriptor) else { continue }
            repeat {
                switch try connection.read() {
                case .fix(let fix):
                    publish(.connected)
                    continuation.yield(.fix(fix))
                case .noFix:
                    publish(.noFix)
                case .other:
                    break
                }
            } while connection.waiting(microseconds: 0)
        }
    }

    /// Waits until `descriptor` is readable (true) or the wake pipe fires (false).
    private func waitReadable(_ descriptor: Int32) -> Bool {
        var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        while poll(&fds, 2, -1) < 0 && errno == EINTR {}
        if fds[1].revents != 0 { drainWake() }
        return fds[0].revents != 0
    }

    /// Sleeps up to `seconds`, returning early when woken.
    private func sleepOrWake(seconds: Double) {
        var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        let milliseconds = Int32(min(Double(Int32.max), max(0, seconds * 1000).rounded(.up)))
        if poll(&fds, 1, milliseconds) > 0 { drainWake() }
    }

    static func monotonicNow() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
