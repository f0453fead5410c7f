/// When the GPS reader wakes while it streams: once per epoch it needs, just after that epoch's reports came, so
/// one wake-up reads the epoch whole. A pure state machine over what each wake-up read; times are the
/// reader's monotonic seconds and the fixes' receiver seconds.
///
/// Waking at the first report of every epoch and again after a fixed pause (as the reader did) costs two
/// wake-ups an epoch, three on a receiver whose epochs outlast the pause. The pacer learns the phase instead:
/// a wake-up that came as data arrived dates the newest epoch; later epochs are due one epoch interval apart in
/// receiver time, and the reader sleeps until the one it needs (`minimumInterval` apart at least, so a 10 Hz
/// receiver is read ten epochs at a time) plus `margin`. When a timed wake-up finds nothing new (the receiver
/// slower than planned, a gap) it waits for the next arrival and dates it anew; when it finds a later epoch than
/// planned (the receiver faster) the phase moves earlier by the difference.
public struct EpochPacer: Sendable, Equatable {
    public enum Wake: Sendable, Equatable {
        /// Sleep until this monotonic time, letting reports wait in the socket.
        case at(Double)
        /// Wait until gpsd sends something.
        case onArrival
    }

    /// Wake at most once per this many seconds while epochs keep coming.
    public let minimumInterval: Double
    /// Seconds after an epoch's expected arrival at which to read it (gpsd reports an epoch's parts over some
    /// milliseconds, more on a loaded unit).
    public let margin: Double
    /// Receiver seconds between epochs, as last seen.
    public private(set) var epoch: Double?
    /// When the epoch of `fixTime` arrived (monotonic).
    private struct Phase: Sendable, Equatable {
        var arrival: Double
        var fixTime: Double
    }
    private var phase: Phase?
    /// The newest fix read so far, and the epoch the next timed wake-up is for.
    private var newest: Double?
    private var plannedFixTime: Double?
    private var plannedWake: Double?
    /// A gap between reads longer than the epoch, seen once.
    private var longerGap: Double?

    public init(minimumInterval: Double = 1, margin: Double = 0.3) {
        self.minimumInterval = minimumInterval
        self.margin = margin
    }

    /// A wake-up at `now` read the fixes of `fixTimes` (receiver seconds, oldest first; none when it read only
    /// other reports). `arrived`: the reader had been waiting for data and woke as it came, so the newest fix
    /// arrived about now.
    public mutating func read(fixTimes: [Double], now: Double, arrived: Bool) -> Wake {
        let fresh = fixTimes.filter { time in newest.map { time > $0 } ?? true }
        guard let latest = fresh.last else {
            // Only other reports, or an epoch read before: keep to the plan while it holds; a timed wake-up that
            // found nothing new means the plan failed: wait for the next epoch and date it.
            if let plannedWake, plannedWake > now + 0.001 { return .at(plannedWake) }
            missed()
            return .onArrival
        }
        learnEpoch(fresh)
        if arrived {
            phase = Phase(arrival: now, fixTime: latest)
        } else if var dated = phase, let planned = plannedFixTime, latest - planned > margin {
            // A later epoch than planned and the margin explain is in hand already: the receiver runs ahead of the
            // phase. (The epochs of the margin itself are expected: a 10 Hz receiver sends three in 0.3 s.)
            dated.arrival -= latest - planned - margin
            phase = dated
        }
        newest = latest
        guard let phase, let epoch else {
            plannedWake = nil
            return .onArrival
        }
        let epochsPerWake = max(1, (minimumInterval / epoch - 1e-6).rounded(.up))
        let due = latest + epochsPerWake * epoch
        let wake = max(now + 0.05, phase.arrival + (due - phase.fixTime) + margin)
        plannedFixTime = due
        plannedWake = wake
        return .at(wake)
    }

    private mutating func missed() {
        phase = nil
        plannedWake = nil
        plannedFixTime = nil
    }

    /// Streaming stopped (a pause, a released watch, a new connection): the phase is stale.
    public mutating func reset() {
        missed()
        newest = nil
    }

    private mutating func learnEpoch(_ fresh: [Double]) {
        // Within one read, consecutive fixes are consecutive epochs.
        if let shortest = zip(fresh.dropFirst(), fresh).map({ $0 - $1 }).filter({ $0 > 0.01 }).min() {
            epoch = shortest
            longerGap = nil
            return
        }
        // Across reads the gap may hide lost epochs: a shorter one is taken at once, a longer one (the receiver
        // slowed down) only when it repeats, so one loss of the sky does not put the reader to sleep for as long.
        guard let newest, let first = fresh.first else { return }
        let gap = first - newest
        guard gap > 0.01 else { return }
        if let epoch, gap > epoch * 1.05 {
            if let seen = longerGap, abs(seen - gap) <= gap * 0.05 {
                self.epoch = gap
                longerGap = nil
            } else {
                longerGap = gap
            }
        } else if epoch != nil || gap <= Self.longestFirstEpoch {
            epoch = gap
            longerGap = nil
        }
    }

    /// The longest first epoch length believed from one gap between reads (a receiver's epochs are 0.05 to 5 s).
    static let longestFirstEpoch = 5.0
}
