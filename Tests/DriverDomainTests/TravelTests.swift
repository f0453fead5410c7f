import DriverAPI
import DriverDomain
import Testing

/// The odometer against seeded receivers (scatter, spikes, gaps, parked scatter, 10 Hz) and the trip and idle
/// rules, behind the fix filter and the motion detector as in the daemon.
@Suite("Odometer, trips and idling")
struct TravelTests {
    typealias Noise = SyntheticReceiver.Noise

    /// Runs filter, motion detector, odometer and trip detector over the samples; `ignition(t)` from the start.
    static func run(
        _ samples: [SyntheticReceiver.Sample], ignition: (Double) -> Bool? = { _ in nil }
    ) -> (odometer: Odometer, actions: [TripDetector.Action]) {
        var odometer = Odometer(), trips = TripDetector()
        var actions: [TripDetector.Action] = []
        let start = samples.first?.fix.time ?? 0
        for (sample, motion) in SyntheticReceiver.accepted(samples) {
            odometer.observe(sample.fix, motion: motion)
            actions += trips.observe(.init(
                time: sample.fix.time, lat: sample.fix.latitude, lng: sample.fix.longitude, odometer: odometer.metres,
                speed: sample.fix.speed, motion: motion, ignition: ignition(sample.fix.time - start)))
        }
        return (odometer, actions)
    }

    struct DriveCase: CustomTestStringConvertible, Sendable {
        var sigma: Double
        var spikeShare = 0.0
        var hz = 1.0
        var tolerance: Double
        var testDescription: String { "σ \(sigma) m, spikes \(spikeShare * 100) %, \(hz) Hz: within \(tolerance * 100) %" }
    }

    @Test(
        "a drive of known length with stops: the odometer within its tolerance", arguments: [
            DriveCase(sigma: 3, tolerance: 0.02), DriveCase(sigma: 10, tolerance: 0.02), DriveCase(sigma: 5, spikeShare: 0.01, tolerance: 0.025),
            DriveCase(sigma: 8, spikeShare: 0.05, tolerance: 0.025), DriveCase(sigma: 3, hz: 10, tolerance: 0.02),
        ])
    func driveLength(_ c: DriveCase) {
        for seed in UInt64(1)...5 {
            let samples = SyntheticReceiver.run(
                [.drive(speed: 12, seconds: 120), .ramp(to: 0, seconds: 6), .stand(seconds: 120), .drive(speed: 8, seconds: 90), .creep(0.5...1.5, seconds: 40),
                 .drive(speed: 14, seconds: 60)],
                noise: Noise(sigma: c.sigma, spikeShare: c.spikeShare, spikeMetres: 30...400, eph: 17, hz: c.hz), seed: seed)
            let truth = samples.last!.truthNorth
            let odometer = Self.run(samples).odometer
            #expect(abs(odometer.metres - truth) / truth <= c.tolerance, "seed \(seed): \(odometer.metres) m against \(truth) m")
            #expect(odometer.gaps == 0)
        }
    }

    @Test("an hour parked with 50 m of scatter and spikes adds nothing")
    func parkedScatter() {
        let samples = SyntheticReceiver.run(
            [.stand(seconds: 3600)], noise: Noise(sigma: 25, spikeShare: 0.02, spikeMetres: 50...300, drift: 0.3, eph: 25), seed: 9)
        #expect(Self.run(samples).odometer.metres < 1)
    }

    @Test("parked, a receiver's Doppler noise (0.3 to 0.9 m/s, as the real stationary log reads) adds nothing; a pull-away's first metres, before the detector says moving, count once it does")
    func dopplerNoiseAndPullAway() {
        var odometer = Odometer()
        let noise = [0.3, 0.8, 0.9, 0.4, 0.6, 0.7, 0.2, 0.9, 0.55, 0.3]
        for t in 0..<600 {
            odometer.observe(Fix(time: Double(t), latitude: 52.37, longitude: 4.9, speed: noise[t % noise.count], horizontalError: 8), motion: .stationary)
        }
        #expect(odometer.metres == 0)
        // Pulling away at 1 m/s² from t = 600: the detector says moving from t = 605.
        for t in 600...620 {
            let v = Double(min(t - 600, 10))
            odometer.observe(Fix(time: Double(t), latitude: 52.37, longitude: 4.9, speed: v, horizontalError: 8), motion: t < 605 ? .stationary : .moving)
        }
        // 0 to 10 m/s in 10 s is 50 m, then 10 s at 10 m/s: 150 m, all of it counted.
        #expect(abs(odometer.metres - 150) < 0.01, "\(odometer.metres)")
    }

    @Test("a gap without fixes (a tunnel, a restart) is bridged as a straight line and flagged; a jump no vehicle could make is not")
    func gapBridged() {
        var odometer = Odometer()
        func fix(_ t: Double, _ north: Double, speed: Double = 10) -> Fix {
            Fix(time: t, latitude: 52.52 + north / 111_320, longitude: 13.405, speed: speed, horizontalError: 8, mode: 3)
        }
        odometer.observe(fix(0, 0), motion: .moving)
        odometer.observe(fix(1, 10), motion: .moving)
        #expect(abs(odometer.metres - 10) < 0.01)
        // 30 s in a tunnel, out 300 m further north.
        let added = odometer.observe(fix(31, 310), motion: .moving)
        #expect(abs(added - 300) < 1 && odometer.gaps == 1 && abs(odometer.bridgedMetres - 300) < 1)
        // Restored from its stored state, it goes on where it was.
        var restored = Odometer(metres: odometer.metres, bridgedMetres: odometer.bridgedMetres, gaps: odometer.gaps, anchor: odometer.anchor)
        restored.observe(fix(32, 320), motion: .moving)
        #expect(abs(restored.metres - 320) < 1)
        // A clock that went back adds nothing and re-anchors.
        #expect(restored.observe(fix(5, 330), motion: .moving) == 0)
        // 3 km further after 10 s (300 m/s): a jump between tracks, not a drive; a gap with no distance.
        let before = restored.metres, gaps = restored.gaps
        #expect(restored.observe(fix(15, 3330), motion: .moving) == 0)
        #expect(restored.metres == before && restored.gaps == gaps + 1)
        // From there the drive goes on.
        #expect(abs(restored.observe(fix(16, 3340), motion: .moving) - 10) < 0.01)
    }

    @Test("no ignition input: a trip from moving until the vehicle stands, ended when the stand began; a 60-s red light does not end it")
    func tripWithoutIgnition() {
        let samples = SyntheticReceiver.run(
            [.stand(seconds: 20), .drive(speed: 10, seconds: 60), .ramp(to: 0, seconds: 5), .stand(seconds: 60), .drive(speed: 10, seconds: 60),
             .ramp(to: 0, seconds: 5), .stand(seconds: 180)],
            noise: Noise(sigma: 4, eph: 17), seed: 3)
        let actions = Self.run(samples).actions
        let ended = actions.compactMap { if case .tripEnded(let start, let end) = $0 { (start, end) } else { nil } }
        #expect(actions.filter { if case .tripStarted = $0 { true } else { false } }.count == 1, "\(actions)")
        #expect(ended.count == 1, "\(actions)")
        if let (start, end) = ended.first {
            let t0 = samples[0].fix.time
            #expect(start.time - t0 >= 20 && start.time - t0 <= 25)
            // The last stand begins at second 210 (slow below 0.5 m/s a second or so before).
            #expect(abs(end.time - t0 - 209) <= 3, "ended \(end.time - t0)")
            #expect(abs((end.odometer - start.odometer) - 1250) < 40, "\(end.odometer - start.odometer) m")
        }
        #expect(!actions.contains { if case .idleEnded = $0 { true } else { false } }, "no idling without an ignition input")
    }

    @Test("ignition: five minutes standing with the engine on is one idle pair; the trip ends 60 s after the ignition goes off")
    func idleAndIgnitionOff() {
        // Drive 60 s, stand 7 minutes with the engine on, drive 60 s, stand with the ignition off from second 570.
        let samples = SyntheticReceiver.run(
            [.drive(speed: 10, seconds: 60), .ramp(to: 0, seconds: 5), .stand(seconds: 420), .drive(speed: 10, seconds: 60),
             .ramp(to: 0, seconds: 5), .stand(seconds: 200)],
            noise: Noise(sigma: 4, eph: 17), seed: 5)
        let actions = Self.run(samples) { t in t < 560 }.actions
        let idles = actions.compactMap { if case .idleEnded(let start, let end) = $0 { (start, end) } else { nil } }
        #expect(idles.count == 1, "\(actions)")
        if let (start, end) = idles.first {
            let t0 = samples[0].fix.time
            #expect(abs(start.time - t0 - 64) <= 3 && abs(end.time - t0 - 486) <= 5, "idle \(start.time - t0)…\(end.time - t0)")
        }
        let trips = actions.compactMap { if case .tripEnded(let start, let end) = $0 { (start, end) } else { nil } }
        // The first trip ends at the long stand (the detector's verdict); the second when the ignition is off.
        #expect(trips.count == 2, "\(actions)")
    }

    @Test("into a garage: the fixes stop while driving, then the ignition goes off; with time alone the trip ends 60 s later, where the last fix was, and idling ends at once")
    func noFixesIgnitionOff() throws {
        // Drive 60 s and stop; the fixes end with the first second of the stand.
        let samples = SyntheticReceiver.run(
            [.drive(speed: 10, seconds: 60), .ramp(to: 0, seconds: 5), .stand(seconds: 1)], noise: Noise(sigma: 3, eph: 10), seed: 9)
        var odometer = Odometer(), trips = TripDetector()
        var actions: [TripDetector.Action] = []
        for (sample, motion) in SyntheticReceiver.accepted(samples) {
            odometer.observe(sample.fix, motion: motion)
            actions += trips.observe(.init(
                time: sample.fix.time, lat: sample.fix.latitude, lng: sample.fix.longitude, odometer: odometer.metres,
                speed: sample.fix.speed, motion: motion, ignition: true))
        }
        #expect(trips.trip != nil && actions.count == 1, "a trip is under way: \(actions)")
        let last = try #require(trips.lastSeen)
        // The ignition on says nothing without fixes; off is first seen 20 s after the last fix.
        #expect(trips.elapsed(until: last.time + 15, ignition: true).isEmpty)
        #expect(trips.elapsed(until: last.time + 20, ignition: false).isEmpty)
        #expect(trips.elapsed(until: last.time + 79, ignition: false).isEmpty, "not yet 60 s off")
        let ended = trips.elapsed(until: last.time + 80, ignition: false)
        guard case .tripEnded(let start, let end)? = ended.first else {
            Issue.record("no trip end: \(ended)")
            return
        }
        #expect(ended.count == 1 && trips.trip == nil)
        #expect(end.time <= last.time + 20 && end.time >= last.time - 6, "dated at the stand or the ignition off: \(end.time - last.time)")
        #expect(abs((end.odometer - start.odometer) - 600) < 30 && end.odometer <= last.odometer, "\(end.odometer - start.odometer) m")
        #expect(trips.elapsed(until: last.time + 200, ignition: false).isEmpty, "once")

        // Idling with the engine on, then the fixes stop and the ignition goes off: the idle pair ends there.
        var idle = TripDetector(settings: .init(idleSeconds: 30))
        for second in 0..<60 {
            _ = idle.observe(.init(time: Double(second), lat: 49, lng: 12, odometer: 0, speed: 0, motion: .stationary, ignition: true))
        }
        #expect(idle.idling)
        let idleEnd = idle.elapsed(until: 100, ignition: false)
        #expect(idleEnd == [.idleEnded(start: .init(time: 0, odometer: 0, lat: 49, lng: 12), end: .init(time: 100, odometer: 0, lat: 49, lng: 12))], "\(idleEnd)")
    }
}
