import DriverDomain
import Testing

/// The pacer against a simulated gpsd: each epoch's fix report arrives some milliseconds after its receiver time
/// (on a unit clock that may run faster or slower than the receiver's), a sky report after it; the reader wakes
/// when the pacer says, reads what has arrived, and blocks for data when nothing is in hand (as `GPSDReader` does).
@Suite("Epoch pacer")
struct EpochPacerTests {
    struct Outcome {
        var wakes = 0
        var epochs = 0
        /// Seconds from a fix's arrival to its read, worst case.
        var worstDelay = 0.0
    }

    /// - Parameters: `epoch` receiver seconds between epochs; `rate` unit seconds per receiver second.
    static func simulate(epoch: Double, seconds: Double, rate: Double = 1, latency: Double = 0.05, minimumInterval: Double = 1) -> Outcome {
        var reports: [(arrival: Double, fixTime: Double?)] = []
        var time = 1000.0
        while time < 1000 + seconds {
            let arrival = 5 + (time - 1000) * rate + latency
            reports.append((arrival, time))
            reports.append((arrival + 0.15, nil))
            time += epoch
        }
        reports.sort { $0.arrival < $1.arrival }
        var pacer = EpochPacer(minimumInterval: minimumInterval)
        var outcome = Outcome()
        var readUpTo = 0
        var now = 0.0
        var sleepUntil: Double?
        let end = reports.last!.arrival - 2 * max(epoch, minimumInterval)
        while now < end {
            var arrived = false
            if let wake = sleepUntil {
                now = wake
                outcome.wakes += 1
                sleepUntil = nil
                if readUpTo < reports.count, reports[readUpTo].arrival > now {
                    // Nothing in hand: block until the next report.
                    now = reports[readUpTo].arrival
                    outcome.wakes += 1
                    arrived = true
                }
            } else {
                guard readUpTo < reports.count else { break }
                now = reports[readUpTo].arrival
                outcome.wakes += 1
                arrived = true
            }
            var fixTimes: [Double] = []
            while readUpTo < reports.count, reports[readUpTo].arrival <= now {
                if let fixTime = reports[readUpTo].fixTime {
                    fixTimes.append(fixTime)
                    outcome.epochs += 1
                    outcome.worstDelay = max(outcome.worstDelay, now - reports[readUpTo].arrival)
                }
                readUpTo += 1
            }
            if case .at(let wake) = pacer.read(fixTimes: fixTimes, now: now, arrived: arrived) { sleepUntil = wake }
        }
        return outcome
    }

    @Test("1 Hz receiver: one wake-up an epoch, each read within the margin")
    func oneHertz() {
        let outcome = Self.simulate(epoch: 1, seconds: 600)
        #expect(Double(outcome.wakes) <= Double(outcome.epochs) * 1.02 + 2)
        #expect(outcome.worstDelay <= 0.31)
    }

    @Test("0.5 Hz receiver (the Geko log): one wake-up an epoch, not three")
    func halfHertz() {
        let outcome = Self.simulate(epoch: 2, seconds: 600)
        #expect(Double(outcome.wakes) <= Double(outcome.epochs) * 1.02 + 2)
        #expect(outcome.worstDelay <= 0.31)
    }

    @Test("10 Hz receiver: one wake-up a second, ten epochs each")
    func tenHertz() {
        let outcome = Self.simulate(epoch: 0.1, seconds: 300)
        #expect(outcome.epochs >= 2900)
        #expect(outcome.wakes <= 305)
        #expect(outcome.worstDelay <= 1.31)
    }

    @Test("a receiver clock 1 % fast or slow against the unit's: the phase follows, few extra wake-ups", arguments: [0.99, 1.01])
    func drift(rate: Double) {
        let outcome = Self.simulate(epoch: 1, seconds: 1200, rate: rate)
        #expect(Double(outcome.wakes) <= Double(outcome.epochs) * 1.1)
        // Late by at most an epoch plus the margin, never drifting further behind.
        #expect(outcome.worstDelay <= 1.31)
    }

    @Test("a gap: the timed wake-up finds nothing, the next arrival is dated anew")
    func gap() {
        var pacer = EpochPacer(minimumInterval: 1)
        #expect(pacer.read(fixTimes: [100], now: 10, arrived: true) == .onArrival)  // no epoch length yet
        #expect(pacer.read(fixTimes: [101], now: 11, arrived: true) == .at(12.3))
        // Only the sky report of 101 came by 12.3: the plan failed.
        #expect(pacer.read(fixTimes: [], now: 12.3, arrived: false) == .onArrival)
        #expect(pacer.read(fixTimes: [120], now: 31.2, arrived: true) == .at(32.5))
        #expect(pacer.epoch == 1)
    }

    @Test("a sky report read while a wake-up is planned keeps the plan")
    func keepsPlan() {
        var pacer = EpochPacer(minimumInterval: 1)
        _ = pacer.read(fixTimes: [100], now: 10, arrived: true)
        #expect(pacer.read(fixTimes: [101], now: 11, arrived: true) == .at(12.3))
        #expect(pacer.read(fixTimes: [], now: 11.2, arrived: true) == .at(12.3))
        #expect(pacer.read(fixTimes: [101], now: 11.25, arrived: true) == .at(12.3))
    }

    @Test("reset forgets the phase (after a pause, the first epoch is dated again)")
    func reset() {
        var pacer = EpochPacer(minimumInterval: 1)
        _ = pacer.read(fixTimes: [100], now: 10, arrived: true)
        _ = pacer.read(fixTimes: [101], now: 11, arrived: true)
        pacer.reset()
        #expect(pacer.read(fixTimes: [150], now: 60.4, arrived: false) == .onArrival)
    }
}
