import DriverAPI
import DriverDomain
import Testing

/// Harsh braking and acceleration against seeded receivers (Doppler noise, scatter, spikes, 10 Hz), behind the
/// fix filter as in the daemon.
@Suite("Harsh driving")
struct HarshDrivingTests {
    typealias Noise = SyntheticReceiver.Noise

    static func events(
        _ phases: [SyntheticReceiver.Phase], noise: Noise = Noise(sigma: 4, eph: 17), seed: UInt64 = 3,
        settings: HarshDrivingDetector.Settings = .init(), ignition: Bool? = nil
    ) -> [HarshDrivingDetector.Event] {
        var detector = HarshDrivingDetector(settings: settings)
        var events: [HarshDrivingDetector.Event] = []
        for (sample, _) in SyntheticReceiver.accepted(SyntheticReceiver.run(phases, noise: noise, seed: seed)) {
            if let event = detector.observe(
                time: sample.fix.time, speed: sample.fix.speed, lat: sample.fix.latitude, lng: sample.fix.longitude, ignition: ignition)
            {
                events.append(event)
            }
        }
        return events
    }

    @Test("a 4.5 m/s² stop from 49 km/h is one harsh braking, dated and measured; 1 Hz and 10 Hz agree", arguments: [1.0, 10.0])
    func hardStop(hz: Double) {
        let events = Self.events(
            [.drive(speed: 13.5, seconds: 40), .ramp(to: 0, seconds: 3), .stand(seconds: 20)], noise: Noise(sigma: 4, eph: 17, hz: hz))
        #expect(events.count == 1, "\(events)")
        guard let event = events.first else { return }
        #expect(event.kind == .braking)
        #expect(abs(event.peak - 4.5) < 0.6, "peak \(event.peak)")
        #expect(event.speedFrom > 11 && event.speedTo < 3, "\(event)")
        #expect(event.endedAt - event.startedAt >= 1 && event.endedAt - event.startedAt <= 4.5, "\(event)")
    }

    @Test("a brisk but normal stop (2.5 m/s²), ten minutes at 9 m/s with 0.3 m/s of Doppler noise, an hour parked with scatter and spikes: none")
    func nothingHarsh() {
        #expect(Self.events([.drive(speed: 12.5, seconds: 40), .ramp(to: 0, seconds: 5), .stand(seconds: 20)]).isEmpty)
        #expect(Self.events([.drive(speed: 9, seconds: 600)], noise: Noise(sigma: 5, eph: 17, dopplerSigma: 0.3)).isEmpty)
        #expect(Self.events([.stand(seconds: 3600)], noise: Noise(sigma: 8, spikeShare: 0.02, spikeMetres: 50...2000, drift: 0.5, eph: 25)).isEmpty)
    }

    @Test("a hard pull-away (3.5 m/s²) is a harsh acceleration; below 10 km/h nothing counts; the ignition off, nothing counts")
    func accelerationAndGates() {
        let pullAway = Self.events([.stand(seconds: 20), .ramp(to: 14, seconds: 4), .drive(speed: 14, seconds: 20)])
        #expect(pullAway.map(\.kind) == [.acceleration], "\(pullAway)")
        // With a 2 m/s² threshold: 2.6 m/s (9.4 km/h) to a stand in a second is below the speed that counts;
        // from 3.2 m/s it counts.
        let low = HarshDrivingDetector.Settings(braking: 2)
        #expect(Self.events([.drive(speed: 2.6, seconds: 30), .ramp(to: 0, seconds: 1), .stand(seconds: 10)], settings: low).isEmpty)
        #expect(Self.events([.drive(speed: 3.2, seconds: 30), .ramp(to: 0, seconds: 1), .stand(seconds: 10)], settings: low).count == 1)
        #expect(Self.events([.drive(speed: 13.5, seconds: 40), .ramp(to: 0, seconds: 3), .stand(seconds: 20)], ignition: false).isEmpty)
        // Thresholds are the operator's: 0 turns a kind off.
        #expect(Self.events([.drive(speed: 13.5, seconds: 40), .ramp(to: 0, seconds: 3)], settings: .init(braking: 0)).isEmpty)
    }

    @Test("one speed report far off (a receiver deriving speed from a jumped position) makes no event")
    func speedGlitch() {
        var detector = HarshDrivingDetector()
        var events: [HarshDrivingDetector.Event] = []
        for second in 0..<60 {
            let speed = second == 30 ? 30.0 : 12.0
            if let event = detector.observe(time: Double(second), speed: speed, lat: 49, lng: 12, ignition: true) { events.append(event) }
        }
        #expect(events.isEmpty, "\(events)")
    }

    @Test("two hard stops with a drive between: two events; a gap in the fixes ends the one going on")
    func twoStopsAndGap() {
        let two = Self.events([
            .drive(speed: 13.5, seconds: 30), .ramp(to: 0, seconds: 3), .stand(seconds: 10), .ramp(to: 12, seconds: 8),
            .drive(speed: 12, seconds: 30), .ramp(to: 0, seconds: 2.5), .stand(seconds: 10),
        ])
        #expect(two.map(\.kind) == [.braking, .braking], "\(two)")
        var detector = HarshDrivingDetector()
        var ended: HarshDrivingDetector.Event?
        for (time, speed) in [(0.0, 14.0), (1, 14), (2, 14), (3, 9.5), (4, 5), (10, 0)] {
            ended = detector.observe(time: time, speed: speed, lat: 49, lng: 12, ignition: nil) ?? ended
        }
        #expect(ended?.kind == .braking && ended?.endedAt == 4, "\(String(describing: ended))")
    }
}
