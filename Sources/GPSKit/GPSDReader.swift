#if canImport(Glibc)
import Glibc
#endif
import DriverAPI
import DriverDomain
import ReaderThread
import Synchronization

/// Reads gpsd through libgps on a thread of its own (blocking C calls never touch the Swift concurrency
/// pool) and hands link states and fixes to its handler, which runs on the reader's thread and sets the pace.
///
/// gpsd may be absent at start, die, restart or lose the fix: the reader reports each state and reconnects
/// with jittered backoff, forever, until `stop()`.
///
/// Wake-ups are the battery's enemy, so the reader batches: while streaming it wakes once per epoch, just after
/// the epoch came (`EpochPacer`), and at most once per `batchInterval`, reading everything gpsd sent meanwhile
/// (an epoch is several reports, a 10 Hz receiver ten epochs a second). When the handler asks for a pause it
/// sleeps and lets gpsd's reports wait in the socket (its receive buffer is enlarged for that): the next wake-up reads every epoch of the pause at once, so a
/// slow sample costs one wake-up and the handler still sees every fix in order. When the handler asks for a
/// release it stops the watch instead (gpsd may power the receiver down), and to take a sample it wakes once,
/// asks gpsd to stream, sleeps until a fresh epoch must have arrived, and reads it.
public final class GPSDReader: Sendable {
    public let endpoint: GPSDEndpoint
    private let handler: any GPSEventHandler
    private let backoff: Backoff
    /// Longest wait between reads while streaming, and the time given to gpsd to deliver an epoch after a
    /// quiet spell.
    private let batchInterval: Double
    private let control = Mutex(Control())
    /// Work handed to this thread by other threads (the vehicle's reader), run in the order it came, between the
    /// batches of fixes: every decision of the tracking pipeline is taken on this one thread.
    private let inbox = Mutex<[@Sendable () -> Void]>([])
    /// The thread, its stop, and the pipe that wakes it when `control` changes.
    private let runner = ReaderRunner()
    private var wakePipe: WakePipe { runner.wakePipe }

    private struct Control {
        /// CLOCK_MONOTONIC seconds until which to stay quiet.
        var pausedUntil: Double?
        var release = false
    }

    public init(
        endpoint: GPSDEndpoint, handler: any GPSEventHandler, backoff: Backoff = Backoff(base: 0.5, cap: 10),
        batchInterval: Double = 1.0
    ) {
        self.endpoint = endpoint
        self.handler = handler
        self.backoff = backoff
        self.batchInterval = batchInterval
    }

    /// Starts the reader thread (once).
    public func start() { runner.start(named: "gpsd-reader") { self.run() } }

    /// Stops the thread.
    public func stop() {
        runner.stop()
    }

    /// Returns once the thread has ended: no fix is handled after this.
    public func ended() async { await runner.ended() }

    /// Read nothing for `seconds`, then deliver what gpsd sent meanwhile. `release` stops the watch instead, so
    /// gpsd may close the device; what it sent before is stale then and discarded.
    public func pause(for seconds: Double, release: Bool) {
        control.withLock {
            $0.pausedUntil = Self.monotonicNow() + seconds
            $0.release = release
        }
        wake()
    }

    /// Back to streaming at once (a rate request, a mode change).
    public func resume() {
        let wasPaused = control.withLock { control -> Bool in
            defer { control.pausedUntil = nil }
            return control.pausedUntil != nil
        }
        if wasPaused { wake() }
    }

    /// Runs `work` on the reader's thread, after what is in hand and before the next wait, in the order handed in.
    public func perform(_ work: @escaping @Sendable () -> Void) {
        inbox.withLock { $0.append(work) }
        wake()
    }

    private func wake() { wakePipe.wake() }

    private func runInbox() {
        while true {
            let work = inbox.withLock { inbox -> [@Sendable () -> Void] in
                defer { inbox.removeAll() }
                return inbox
            }
            if work.isEmpty { return }
            for item in work { item() }
        }
    }

    private var isStopping: Bool { runner.isStopping }

    // MARK: - The thread

    private func run() {
        var attempt = 0
        var generator = SystemRandomNumberGenerator()
        while !isStopping {
            publish(.link(.connecting))
            let connection = GPSDConnection()
            do {
                try connection.open(endpoint)
                try connection.set(.streaming)
                attempt = 0
                publish(.link(.connected))
                try serve(connection)
            } catch {
                publish(.link(.lost))
            }
            connection.close()
            guard !isStopping else { break }
            let delay = backoff.delay(attempt: attempt, random: Double.random(in: 0..<1, using: &generator))
            attempt += 1
            // At least 100 ms, so a gpsd that accepts and drops at once cannot make this spin.
            wait(seconds: max(0.1, delay))
        }
    }

    @discardableResult
    private func publish(_ event: GPSEvent) -> GPSPace {
        handler.handle(event)
    }

    private func apply(_ pace: GPSPace) {
        switch pace {
        case .continue:
            break
        case .stream:
            control.withLock { $0.pausedUntil = nil }
        case .pause(let seconds, let release):
            control.withLock {
                $0.pausedUntil = Self.monotonicNow() + seconds
                $0.release = release
            }
        }
    }

    /// Reads reports until gpsd goes away or the reader stops.
    private func serve(_ connection: GPSDConnection) throws(GPSDError) {
        var lastLink = GPSLinkState.connected
        var watch = GPSDConnection.Watch.streaming
        /// Set after gpsd was asked to stream again: give it time to deliver a fresh epoch.
        var justResumed = false
        var pacer = EpochPacer(minimumInterval: batchInterval)
        /// Whether this pass's read came as the reader woke for data (not after a sleep).
        var arrived = false
        while true {
            if isStopping { return }
            let (pausedUntil, release) = control.withLock { ($0.pausedUntil, $0.release) }
            let now = Self.monotonicNow()
            if let pausedUntil, pausedUntil > now {
                // Streaming on: gpsd's reports wait in the socket until the pause ends (one wake-up for them all).
                if release, watch != .released {
                    try connection.set(.released)
                    watch = .released
                }
                wait(seconds: pausedUntil - now)
                continue
            }
            let drainPause = pausedUntil != nil && watch == .streaming
            if pausedUntil != nil { control.withLock { $0.pausedUntil = nil } }
            if watch != .streaming {
                // Whatever gpsd sent before the watch was released is stale.
                while connection.waiting(microseconds: 0) { _ = try connection.read() }
                try connection.set(.streaming)
                watch = .streaming
                justResumed = true
            }
            if justResumed {
                // One wake-up for the sample: long enough for gpsd to answer and send the next epoch
                // (longer after a release, when gpsd must reopen the receiver).
                wait(seconds: release ? batchInterval * 3 : batchInterval * 1.3)
                justResumed = false
                arrived = false
            } else if !drainPause {
                let inHand = connection.waiting(microseconds: 0)
                // Nothing read: a control change or a deadline.
                if !inHand, !wait(readable: connection.descriptor, seconds: handler.idle()) { continue }
                // Woken as the data came: the pacer dates the epoch by this wake-up.
                arrived = !inHand
            } else {
                arrived = false
            }
            // Everything gpsd sent meanwhile, in order; only the newest fix of an epoch counts.
            var fixes: [Fix] = []
            var sawNoFix = false
            var noFixReports = 0
            while connection.waiting(microseconds: 0) {
                switch try connection.read() {
                case .fix(let fix):
                    if let last = fixes.last, last.time == fix.time { fixes[fixes.count - 1] = fix } else { fixes.append(fix) }
                    sawNoFix = false
                case .noFix:
                    sawNoFix = true
                    noFixReports += 1
                case .other:
                    break
                }
            }
            if !fixes.isEmpty, lastLink != .connected {
                lastLink = .connected
                publish(.link(.connected))
            }
            if noFixReports > 0 { publish(.noFixReports(noFixReports)) }
            for fix in fixes {
                var pace = publish(.fix(fix))
                // A pause asked for at an epoch that waited in the socket (read late, in a batch) counts from that
                // epoch: the newer ones read with it arrived since. Counted from now, each sample would lag the
                // next by what the batch held, and slow samples would drift behind the receiver.
                if case .pause(let seconds, false) = pace, let newest = fixes.last?.time, newest > fix.time {
                    pace = .pause(seconds: max(0, seconds - (newest - fix.time)), release: false)
                }
                apply(pace)
            }
            if sawNoFix, lastLink != .noFix {
                lastLink = .noFix
                publish(.link(.noFix))
            }
            guard control.withLock({ $0.pausedUntil == nil }), watch == .streaming else {
                pacer.reset()
                continue
            }
            // Streaming: sleep until the epoch needed next has come, its reports gathered in the socket, instead
            // of waking for each report (one wake-up an epoch, or a second's epochs on a fast receiver).
            if case .at(let wake) = pacer.read(fixTimes: fixes.map(\.time), now: Self.monotonicNow(), arrived: arrived) {
                wait(seconds: wake - Self.monotonicNow())
            }
        }
    }

    /// Sleeps up to `seconds` (nil: no limit) or until `readable` has data (true) or the wake pipe fires. Every
    /// wait of the reader comes here: the work handed in runs first (`perform`), then the handler's housekeeping,
    /// which shortens the wait to its deadline.
    @discardableResult
    private func wait(readable descriptor: Int32? = nil, seconds: Double?) -> Bool {
        runInbox()
        let seconds = [seconds, handler.housekeeping()].compactMap { $0 }.min()
        return wakePipe.wait(readable: descriptor, seconds: seconds)
    }

    static func monotonicNow() -> Double { monotonicSeconds() }
}
