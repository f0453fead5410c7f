#if canImport(Glibc)
import Glibc
#endif
import DriverAPI
import DriverDomain
import ReaderThread

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
///
/// The pace is the thread's own (`ReadLoop`, a value on its stack): only the handler's answers change it, from its
/// events or from its housekeeping; other threads only `wake()` the reader so that housekeeping runs.
public final class GPSDReader: Sendable {
    public let endpoint: GPSDEndpoint
    fileprivate let handler: any GPSEventHandler
    fileprivate let backoff: Backoff
    /// Longest wait between reads while streaming, and the time given to gpsd to deliver an epoch after a
    /// quiet spell.
    fileprivate let batchInterval: Double
    /// The thread, its stop, and the pipe that wakes it.
    fileprivate let runner: ReaderRunner

    /// - Parameter wakePipe: the pipe the thread sleeps on, shared with the handler's inbox when it has one.
    public init(
        endpoint: GPSDEndpoint, handler: any GPSEventHandler, backoff: Backoff = Backoff(base: 0.5, cap: 10),
        batchInterval: Double = 1.0, wakePipe: WakePipe = WakePipe()
    ) {
        self.endpoint = endpoint
        self.handler = handler
        self.backoff = backoff
        self.batchInterval = batchInterval
        self.runner = ReaderRunner(wakePipe: wakePipe)
    }

    /// Starts the reader thread (once).
    public func start() {
        runner.start(named: "gpsd-reader") { [self] in
            var loop = ReadLoop(reader: self)
            loop.run()
        }
    }

    /// Stops the thread.
    public func stop() {
        runner.stop()
    }

    /// Returns once the thread has ended: no fix is handled after this.
    public func ended() async { await runner.ended() }

    /// Wakes the thread: the handler's housekeeping runs before the next wait (work was handed to it).
    public func wake() { runner.wakePipe.wake() }

    public static func monotonicNow() -> Double { monotonicSeconds() }

    /// The shortest sleep for a deadline the handler gives: none of them may make the thread spin.
    public static let minimumWait = 0.05
}

/// The reader's thread: its pace and its waits, a value only that thread holds.
private struct ReadLoop {
    let reader: GPSDReader
    /// CLOCK_MONOTONIC seconds until which to stay quiet.
    var pausedUntil: Double?
    var release = false

    init(reader: GPSDReader) { self.reader = reader }

    private var handler: any GPSEventHandler { reader.handler }
    private var isStopping: Bool { reader.runner.isStopping }

    mutating func run() {
        var attempt = 0
        var generator = SystemRandomNumberGenerator()
        while !isStopping {
            publish(.link(.connecting))
            let connection = GPSDConnection()
            do {
                try connection.open(reader.endpoint)
                try connection.set(.streaming)
                attempt = 0
                publish(.link(.connected))
                try serve(connection)
            } catch {
                publish(.link(.lost))
            }
            connection.close()
            guard !isStopping else { break }
            let delay = reader.backoff.delay(attempt: attempt, random: Double.random(in: 0..<1, using: &generator))
            attempt += 1
            // At least 100 ms, so a gpsd that accepts and drops at once cannot make this spin; the whole delay, though
            // work handed in wakes the thread meanwhile (the vehicle's speed each second must not shorten it).
            let until = GPSDReader.monotonicNow() + max(0.1, delay)
            while !isStopping, case let left = until - GPSDReader.monotonicNow(), left > 0 { wait(seconds: left, endsOnPace: false) }
        }
    }

    @discardableResult
    private func publish(_ event: GPSEvent) -> GPSPace {
        handler.handle(event)
    }

    /// Returns whether the pace changed.
    @discardableResult
    private mutating func apply(_ pace: GPSPace) -> Bool {
        switch pace {
        case .continue:
            return false
        case .stream:
            defer { pausedUntil = nil }
            return pausedUntil != nil
        case .pause(let seconds, let release):
            pausedUntil = GPSDReader.monotonicNow() + seconds
            self.release = release
            return true
        }
    }

    /// Reads reports until gpsd goes away or the reader stops.
    private mutating func serve(_ connection: GPSDConnection) throws(GPSDError) {
        var lastLink = GPSLinkState.connected
        var watch = GPSDConnection.Watch.streaming
        /// Set after gpsd was asked to stream again: give it time to deliver a fresh epoch.
        var justResumed = false
        var pacer = EpochPacer(minimumInterval: reader.batchInterval)
        /// Whether this pass's read came as the reader woke for data (not after a sleep).
        var arrived = false
        while true {
            if isStopping { return }
            let now = GPSDReader.monotonicNow()
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
            pausedUntil = nil
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
                wait(seconds: release ? reader.batchInterval * 3 : reader.batchInterval * 1.3)
                justResumed = false
                arrived = false
            } else if !drainPause {
                let inHand = connection.waiting(microseconds: 0)
                // Nothing read: a change of pace or a deadline.
                if !inHand, !wait(readable: connection.descriptor, seconds: nil, idle: handler.idle()) { continue }
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
            guard pausedUntil == nil, watch == .streaming else {
                pacer.reset()
                continue
            }
            // Streaming: sleep until the epoch needed next has come, its reports gathered in the socket, instead
            // of waking for each report (one wake-up an epoch, or a second's epochs on a fast receiver).
            if case .at(let wake) = pacer.read(fixTimes: fixes.map(\.time), now: GPSDReader.monotonicNow(), arrived: arrived) {
                wait(seconds: wake - GPSDReader.monotonicNow())
            }
        }
    }

    /// Sleeps up to `seconds` (nil: no limit) or until `readable` has data (true) or the wake pipe fires. Every
    /// wait of the reader comes here, and only here are its deadlines combined: the handler's housekeeping runs
    /// first (the work handed in, then what is due), and a change of pace it asks for ends the wait at once for the
    /// loop to take (`endsOnPace`; a reconnection's backoff keeps its time). The handler's deadlines (`idle`'s and
    /// the housekeeping's) count for no less than `minimumWait`.
    @discardableResult
    private mutating func wait(readable descriptor: Int32? = nil, seconds: Double?, idle: Double? = nil, endsOnPace: Bool = true) -> Bool {
        let chores = handler.housekeeping()
        if let pace = chores.pace, apply(pace), endsOnPace { return false }
        let handlerDue = [idle, chores.dueIn].compactMap { $0 }.map { max(GPSDReader.minimumWait, $0) }
        let sleep = (handlerDue + [seconds].compactMap { $0 }).min()
        return reader.runner.wakePipe.wait(readable: descriptor, seconds: sleep)
    }
}
