import DriverAPI
import DriverDomain
import Testing

/// The motion detector against seeded noise models: gaussian scatter at several sigmas, multipath spikes, slow
/// drift, 10 Hz receivers; parked after a drive, a 60-s red light, creeping in a queue.
@Suite("Motion detector under receiver noise")
struct MotionNoiseTests {
    typealias Noise = SyntheticReceiver.Noise

    /// Runs the detector (behind the fix filter, as the daemon does); returns each sample with the motion after it.
    static func detect(_ samples: [SyntheticReceiver.Sample], filtered: Bool = true) -> [(SyntheticReceiver.Sample, Motion)] {
        var detector = MotionDetector()
        var filter = FixFilter()
        return samples.compactMap { sample in
            if filtered {
                switch filter.evaluate(sample.fix) {
                case .accept, .reanchor: break
                case .duplicate, .reject: return (sample, detector.motion)
                }
            }
            _ = detector.observe(sample.fix)
            return (sample, detector.motion)
        }
    }

    struct ParkedCase: CustomTestStringConvertible, Sendable {
        var sigma: Double
        var eph: Double?
        var spikeShare = 0.0
        var drift = 0.0
        var hz = 1.0
        var testDescription: String {
            "σ \(sigma) m, eph \(eph.map { "\($0)" } ?? "none"), spikes \(spikeShare * 100) %, drift \(drift) m/√s, \(hz) Hz"
        }
    }

    static let parkedCases: [ParkedCase] = [
        .init(sigma: 2, eph: 5), .init(sigma: 5, eph: 17), .init(sigma: 10, eph: 17), .init(sigma: 17, eph: 17),
        // Scatter up to 50 m with the error estimate gpsd gives for HDOP 0.9.
        .init(sigma: 25, eph: 17), .init(sigma: 25, eph: nil),
        .init(sigma: 5, eph: 17, spikeShare: 0.02), .init(sigma: 10, eph: 17, spikeShare: 0.05),
        .init(sigma: 3, eph: 10, drift: 0.3), .init(sigma: 8, eph: 17, drift: 0.5),
        .init(sigma: 3, eph: 5, hz: 10), .init(sigma: 10, eph: 17, spikeShare: 0.01, hz: 10),
    ]

    @Test("parked after a drive: stationary within 75 s, and it stays so for ten minutes", arguments: parkedCases)
    func parked(_ parked: ParkedCase) {
        for seed in UInt64(1)...8 {
            let noise = Noise(sigma: parked.sigma, spikeShare: parked.spikeShare, drift: parked.drift, eph: parked.eph, hz: parked.hz)
            let samples = SyntheticReceiver.run([.drive(speed: 12, seconds: 30), .stand(seconds: 600)], noise: noise, seed: seed)
            let motions = Self.detect(samples)
            let parkedAt = samples.first { $0.phase == 1 }!.fix.time
            let stationaryAt = motions.first { $0.0.phase == 1 && $0.1 == .stationary }?.0.fix.time
            guard let stationaryAt else {
                Issue.record("seed \(seed): never stationary")
                continue
            }
            #expect(stationaryAt - parkedAt <= 75, "seed \(seed): stationary after \(stationaryAt - parkedAt) s")
            let moved = motions.filter { $0.0.fix.time > stationaryAt && $0.1 != .stationary }
            #expect(moved.isEmpty, "seed \(seed): moving again at \(moved.first.map { $0.0.fix.time - parkedAt } ?? 0) s after parking")
        }
    }

    @Test("a 60-s red light never counts as parked", arguments: [
        Noise(sigma: 3, eph: 5), Noise(sigma: 10, eph: 17), Noise(sigma: 25, eph: 17, hz: 1),
        Noise(sigma: 5, spikeShare: 0.03, eph: 17), Noise(sigma: 3, eph: 5, hz: 10),
    ])
    func redLight(_ noise: Noise) {
        for seed in UInt64(1)...8 {
            let samples = SyntheticReceiver.run(
                [.drive(speed: 12, seconds: 30), .ramp(to: 0, seconds: 4), .stand(seconds: 60), .ramp(to: 10, seconds: 4), .drive(speed: 10, seconds: 60)],
                noise: noise, seed: seed)
            let stationary = Self.detect(samples).filter { $0.0.phase > 0 && $0.1 == .stationary }
            #expect(stationary.isEmpty, "seed \(seed): stationary at phase \(stationary.first?.0.phase ?? -1)")
        }
    }

    @Test("creeping in a queue at 0.5 to 1.5 m/s never counts as parked", arguments: [
        Noise(sigma: 3, eph: 5), Noise(sigma: 10, eph: 17), Noise(sigma: 5, spikeShare: 0.02, eph: 17), Noise(sigma: 3, eph: 5, hz: 10),
    ])
    func creeping(_ noise: Noise) {
        for seed in UInt64(1)...8 {
            let samples = SyntheticReceiver.run([.drive(speed: 10, seconds: 20), .creep(0.5...1.5, seconds: 300)], noise: noise, seed: seed)
            let stationary = Self.detect(samples).filter { $0.1 == .stationary }
            #expect(stationary.isEmpty, "seed \(seed): stationary \(stationary.count) times")
        }
    }

    @Test("pulling away from a parking spot is moving within 4 s", arguments: [Noise(sigma: 5, eph: 17), Noise(sigma: 3, eph: 5, hz: 10)])
    func pullingAway(_ noise: Noise) {
        for seed in UInt64(1)...8 {
            let samples = SyntheticReceiver.run(
                [.drive(speed: 12, seconds: 20), .stand(seconds: 120), .ramp(to: 6, seconds: 3), .drive(speed: 6, seconds: 30)],
                noise: noise, seed: seed)
            let motions = Self.detect(samples)
            #expect(motions.contains { $0.0.phase == 1 && $0.1 == .stationary }, "seed \(seed)")
            let away = samples.first { $0.phase == 2 }!.fix.time
            let movingAt = motions.first { $0.0.phase >= 2 && $0.1 == .moving }?.0.fix.time
            #expect(movingAt.map { $0 - away <= 4 } == true, "seed \(seed): moving \(movingAt.map { $0 - away } ?? -1) s after pulling away")
        }
    }

    @Test("driving with Doppler noise and spikes never counts as parked")
    func driving() {
        for seed in UInt64(1)...8 {
            let noise = Noise(sigma: 5, spikeShare: 0.02, eph: 17, dopplerSigma: 0.3)
            let samples = SyntheticReceiver.run([.drive(speed: 8, seconds: 600)], noise: noise, seed: seed)
            #expect(Self.detect(samples).allSatisfy { $0.1 == .moving }, "seed \(seed)")
        }
    }
}
