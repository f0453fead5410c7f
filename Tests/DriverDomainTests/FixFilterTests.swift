import DriverAPI
import DriverDomain
import Testing

@Suite("Fix-quality filter")
struct FixFilterTests {
    static let origin = (lat: 52.52, lon: 13.405)
    static let start = 1_795_852_800.0

    static func fix(_ t: Double, north: Double = 0, speed: Double? = 10, error: Double? = 5, mode: Int = 3) -> Fix {
        Fix(time: start + t, latitude: origin.lat + north / 111_320, longitude: origin.lon, speed: speed, horizontalError: error, mode: mode)
    }

    @Test("each impossible fix is rejected with its reason and counted")
    func reasons() {
        var filter = FixFilter()
        #expect(filter.evaluate(Self.fix(0)) == .accept)
        #expect(filter.evaluate(Self.fix(1, north: 10, mode: 1)) == .reject(.mode))
        #expect(filter.evaluate(Self.fix(1, north: 10, error: 150)) == .reject(.horizontalError))
        #expect(filter.evaluate(Self.fix(0, north: 1)) == .duplicate)  // gpsd's second report of the epoch
        #expect(filter.evaluate(Self.fix(0, north: 1)) == .reject(.time))  // the same epoch again: stale
        #expect(filter.evaluate(Self.fix(-5, north: 1)) == .reject(.time))  // older than the last accepted
        #expect(filter.evaluate(Self.fix(1, north: 10, speed: 90)) == .reject(.speed))
        #expect(filter.evaluate(Self.fix(1, north: 2000)) == .reject(.jump))  // a spike 2 km off
        #expect(filter.evaluate(Self.fix(2, north: 20)) == .accept)  // the track goes on from the last good fix
        filter.noFixReport()
        #expect(filter.rejected == [.mode: 2, .horizontalError: 1, .time: 2, .speed: 1, .jump: 1])
        #expect(filter.totalRejected == 7 && filter.accepted == 2)
    }

    @Test("the error limit is configurable")
    func errorLimit() {
        var limits = FixQualityLimits()
        limits.maxHorizontalError = 20
        var filter = FixFilter(limits: limits)
        #expect(filter.evaluate(Self.fix(0, error: 25)) == .reject(.horizontalError))
        #expect(filter.evaluate(Self.fix(0, error: 19)) == .accept)
    }

    @Test("a date a whole number of 1024-week eras behind the reference is a rollover; an old log is not")
    func rollover() {
        let now = Self.start
        #expect(FixFilter.isRollover(now - FixFilter.gpsEra, reference: now))
        #expect(FixFilter.isRollover(now - FixFilter.gpsEra + 3 * 86400, reference: now))
        #expect(FixFilter.isRollover(now - 2 * FixFilter.gpsEra - 86400, reference: now))
        #expect(!FixFilter.isRollover(now - 16.6 * 365.25 * 86400, reference: now))  // a 2010 log replayed in 2026
        #expect(!FixFilter.isRollover(now - 3600, reference: now))
        #expect(!FixFilter.isRollover(now + FixFilter.gpsEra, reference: now))
        var filter = FixFilter()
        #expect(filter.evaluate(Self.fix(-FixFilter.gpsEra), reference: now) == .reject(.rollover))
        #expect(filter.evaluate(Self.fix(0), reference: now) == .accept)
    }

    @Test("parked scatter with the receiver's eph and 10 Hz jitter pass untouched")
    func jitterPasses() {
        for (noise, seconds) in [(SyntheticReceiver.Noise(sigma: 8, eph: 17), 600.0), (SyntheticReceiver.Noise(sigma: 1, eph: 3, hz: 10), 120)] {
            var filter = FixFilter()
            let samples = SyntheticReceiver.run([.stand(seconds: seconds), .drive(speed: 30, seconds: seconds)], noise: noise, seed: 11)
            for sample in samples { _ = filter.evaluate(sample.fix) }
            #expect(filter.totalRejected == 0, "\(noise.hz) Hz: \(filter.rejected)")
        }
    }

    @Test("spikes of 150 m to 2 km never pass, parked or driving, at 1 and 10 Hz", arguments: [1.0, 10.0])
    func spikes(hz: Double) {
        for seed in UInt64(1)...10 {
            var filter = FixFilter()
            let noise = SyntheticReceiver.Noise(sigma: 4, spikeShare: 0.02, spikeMetres: 150...2000, eph: 17, hz: hz)
            let samples = SyntheticReceiver.run([.drive(speed: 14, seconds: 120), .stand(seconds: 120), .drive(speed: 25, seconds: 120)], noise: noise, seed: seed)
            var passed = 0, lost = 0
            for sample in samples {
                let verdict = filter.evaluate(sample.fix)
                let used = verdict != .reject(.jump) && verdict != .reject(.time)
                if sample.spike && used { passed += 1 }
                if !sample.spike && !used { lost += 1 }
            }
            #expect(passed == 0, "seed \(seed): \(passed) spikes passed")
            #expect(lost <= samples.count / 100, "seed \(seed): \(lost) good fixes lost")
        }
    }

    @Test("an outlier accepted after a tunnel does not poison the track: the filter re-anchors on the good fixes")
    func reanchorAfterTunnel() {
        var filter = FixFilter()
        for t in 0..<10 { #expect(filter.evaluate(Self.fix(Double(t), north: Double(t) * 15, speed: 15)) == .accept) }
        // 60 s tunnel; the first fix out is 1.5 km off (plausible over 60 s, wrong), then the true track.
        #expect(filter.evaluate(Self.fix(70, north: 2400, speed: 15)) == .accept)
        var verdicts: [FixFilter.Verdict] = []
        for t in 71...76 { verdicts.append(filter.evaluate(Self.fix(Double(t), north: Double(t) * 15, speed: 15))) }
        #expect(verdicts.prefix(3) == [.reject(.jump), .reject(.jump), .reject(.jump)])
        #expect(verdicts[3] == .reanchor)
        #expect(verdicts[4...].allSatisfy { $0 == .accept })
        #expect(filter.reanchors == 1)
    }

    @Test("a receiver whose clock went back is followed once its new timeline is consistent; a stale repeat never is")
    func clockWentBack() {
        var filter = FixFilter()
        for t in 0..<5 { _ = filter.evaluate(Self.fix(Double(t), north: Double(t) * 10)) }
        // 52 minutes back, then steady.
        let back = -3120.0
        let verdicts = (0..<6).map { filter.evaluate(Self.fix(back + Double($0), north: 50 + Double($0) * 10)) }
        #expect(verdicts.prefix(3).allSatisfy { $0 == .reject(.time) })
        #expect(verdicts[3] == .reanchor)
        // One fix repeated over and over: never accepted again.
        var stale = FixFilter()
        _ = stale.evaluate(Self.fix(0))
        #expect(stale.evaluate(Self.fix(0)) == .duplicate)
        for _ in 0..<100 { #expect(stale.evaluate(Self.fix(0)) == .reject(.time)) }
        #expect(stale.reanchors == 0)
    }
}
