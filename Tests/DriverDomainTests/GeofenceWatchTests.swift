#if canImport(Glibc)
import Glibc
#endif
import DriverAPI
import DriverDomain
import Testing

/// Arrival and departure by geofence against seeded receivers: a stop of a minute, a drive-by at 30 km/h, ten
/// minutes parked on the border, multipath spikes, leaving before and after the stop's action.
@Suite("Geofence arrival and departure")
struct GeofenceWatchTests {
    typealias Noise = SyntheticReceiver.Noise
    typealias Target = GeofenceWatch.Target

    /// A stop `north` metres up the synthetic receiver's track (and `east` metres beside it).
    static func target(north: Double, east: Double = 0, radius: Double = 100, stage: Target.Stage = .approaching) -> Target {
        let origin = SyntheticReceiver.origin
        return Target(
            stopId: "t-dropoff", taskId: "t", lat: origin.lat + north / 111_320,
            lng: origin.lon + east / (111_320 * cos(origin.lat * .pi / 180)), radius: radius, stage: stage)
    }

    /// Runs the fix filter, the motion detector and the watch as the daemon does; `stage` may change with the
    /// actions (a driver tapping after an arrival, completing after some time).
    static func run(
        _ samples: [SyntheticReceiver.Sample], target: Target, stageAfter: (GeofenceWatch.Action, Double) -> Target.Stage? = { _, _ in nil },
        stageAt: [(time: Double, stage: Target.Stage)] = []
    ) -> [GeofenceWatch.Action] {
        var watch = GeofenceWatch()
        var target = target, actions: [GeofenceWatch.Action] = [], pending = stageAt, closed = false
        let start = samples.first?.fix.time ?? 0
        for (sample, motion) in SyntheticReceiver.accepted(samples) {
            while let change = pending.first, sample.fix.time - start >= change.time {
                target.stage = change.stage
                pending.removeFirst()
            }
            // A visit that ended stops being watched, as in the daemon.
            for action in watch.observe(.init(sample.fix), motion: motion, targets: closed ? [] : [target]) {
                actions.append(action)
                if case .left(_, _, _, _, false, _) = action { closed = true }
                if let stage = stageAfter(action, sample.fix.time - start) { target.stage = stage }
            }
        }
        return actions
    }

    static func arrivals(_ actions: [GeofenceWatch.Action]) -> [(distance: Double, time: Double)] {
        actions.compactMap { if case .arrived(_, _, let distance, _, let time) = $0 { (distance, time) } else { nil } }
    }

    static func departures(_ actions: [GeofenceWatch.Action]) -> [(unfinished: Bool, time: Double, departedEarlier: Bool)] {
        actions.compactMap { if case .left(_, _, _, let time, let unfinished, let earlier) = $0 { (unfinished, time, earlier) } else { nil } }
    }

    struct StopCase: CustomTestStringConvertible, Sendable {
        var sigma: Double
        var eph: Double
        var spikeShare = 0.0
        var hz = 1.0
        var testDescription: String { "σ \(sigma) m, eph \(eph) m, spikes \(spikeShare * 100) %, \(hz) Hz" }
    }

    @Test(
        "a minute's stop at the stop: one arrival within the dwell of stopping, nothing else", arguments: [
            StopCase(sigma: 3, eph: 5), StopCase(sigma: 10, eph: 17), StopCase(sigma: 25, eph: 40),
            StopCase(sigma: 8, eph: 17, spikeShare: 0.05), StopCase(sigma: 5, eph: 10, hz: 10),
        ])
    func stopArrives(_ c: StopCase) {
        for seed in UInt64(1)...10 {
            // 300 m at 12 m/s (25 s), slowing to a stand over 5 s, 60 s standing, then away.
            let samples = SyntheticReceiver.run(
                [.drive(speed: 12, seconds: 25), .ramp(to: 0, seconds: 5), .stand(seconds: 60), .drive(speed: 12, seconds: 30)],
                noise: Noise(sigma: c.sigma, spikeShare: c.spikeShare, eph: c.eph, hz: c.hz), seed: seed)
            let stopAt = 12.0 * 25 + 6 * 5 / 2
            let actions = Self.run(samples, target: Self.target(north: stopAt))
            let arrivals = Self.arrivals(actions)
            #expect(arrivals.count == 1, "seed \(seed): \(actions)")
            guard let arrival = arrivals.first else { continue }
            // The vehicle stands from second 30; slow below 2 m/s from about second 28.
            let delay = arrival.time - samples[0].fix.time - 30
            #expect(delay <= 21 && delay >= -5, "seed \(seed): arrival \(delay) s after stopping")
            #expect(arrival.distance <= max(100, c.eph) + 0.1)
        }
    }

    @Test("a drive-by at 30 km/h, straight through the stop or 40 m beside it: no arrival", arguments: [0.0, 40.0])
    func driveBy(_ east: Double) {
        for seed in UInt64(1)...10 {
            let samples = SyntheticReceiver.run([.drive(speed: 8.33, seconds: 90)], noise: Noise(sigma: 8, eph: 17), seed: seed)
            #expect(Self.run(samples, target: Self.target(north: 375, east: east)).isEmpty, "seed \(seed)")
        }
    }

    @Test("a crawl past the stop in a queue, slower than 2 m/s for 20 s inside: an arrival (it is one by the rule)")
    func queueInsideCounts() {
        let samples = SyntheticReceiver.run([.drive(speed: 10, seconds: 10), .creep(0.5...1.5, seconds: 60)], noise: Noise(sigma: 4, eph: 8), seed: 3)
        #expect(Self.arrivals(Self.run(samples, target: Self.target(north: 130))).count == 1)
    }

    @Test("ten minutes parked on the geofence's border with scatter and spikes: one arrival, never a departure")
    func borderScatter() {
        for seed in UInt64(1)...10 {
            // Stands 100 m short of the stop, right on its border, for ten minutes.
            let samples = SyntheticReceiver.run(
                [.drive(speed: 10, seconds: 20), .ramp(to: 0, seconds: 4), .stand(seconds: 600)],
                noise: Noise(sigma: 15, spikeShare: 0.02, spikeMetres: 100...1500, eph: 25), seed: seed)
            let actions = Self.run(samples, target: Self.target(north: 220 + 100)) { action, _ in
                if case .arrived = action { return .serving }
                return nil
            }
            #expect(Self.arrivals(actions).count == 1, "seed \(seed): \(actions)")
            #expect(Self.departures(actions).isEmpty, "seed \(seed): \(actions)")
        }
    }

    @Test("leaving after the stop's action: one departure; leaving with the action undone: one unfinished, then done when it is completed away")
    func departures() {
        let samples = SyntheticReceiver.run(
            [.drive(speed: 10, seconds: 20), .ramp(to: 0, seconds: 4), .stand(seconds: 90), .drive(speed: 10, seconds: 40), .stand(seconds: 30)],
            noise: Noise(sigma: 8, spikeShare: 0.03, eph: 17), seed: 7)
        let stop = Self.target(north: 220)
        // Arrived, delivered 60 s later, then drives off.
        let done = Self.run(samples, target: stop, stageAfter: { action, _ in
            if case .arrived = action { return .serving }
            return nil
        }, stageAt: [(time: 80, stage: .served)])
        #expect(Self.arrivals(done).count == 1)
        let left = Self.departures(done)
        #expect(left.count == 1 && left.first?.unfinished == false, "\(done)")
        if let leftAt = left.first?.time {
            // Drives off at second 114 at 10 m/s: beyond the 150-m border after 15 s.
            let after = leftAt - samples[0].fix.time - 114
            #expect(after >= 10 && after <= 20, "left \(after) s after driving off")
        }
        // Never completed before driving off: one unfinished departure; completed 20 s after (away): done.
        let undone = Self.run(samples, target: stop, stageAfter: { action, _ in
            if case .arrived = action { return .serving }
            return nil
        }, stageAt: [(time: 150, stage: .served)])
        let leftUndone = Self.departures(undone)
        #expect(leftUndone.map(\.unfinished) == [true, false], "\(undone)")
        // Completed away without coming back: the visit ended at the unfinished departure.
        #expect(leftUndone.map(\.departedEarlier) == [false, true], "\(undone)")
        #expect(left.first?.departedEarlier == false)
    }

    @Test("left unfinished, came back, completed at the stop and left again: the last departure is the visit's end")
    func cameBack() {
        // Stands from second 24 to 114, drives 400 m on, comes back (164-204), stands at the stop, drives off at 234.
        let samples = SyntheticReceiver.run(
            [.drive(speed: 10, seconds: 20), .ramp(to: 0, seconds: 4), .stand(seconds: 90), .drive(speed: 10, seconds: 40), .stand(seconds: 10),
             .drive(speed: -10, seconds: 40), .stand(seconds: 30), .drive(speed: 10, seconds: 40)],
            noise: Noise(sigma: 8, spikeShare: 0.03, eph: 17), seed: 7)
        let actions = Self.run(samples, target: Self.target(north: 220), stageAfter: { action, _ in
            if case .arrived = action { return .serving }
            return nil
        }, stageAt: [(time: 215, stage: .served)])
        let departures = Self.departures(actions)
        #expect(departures.map(\.unfinished) == [true, false] && departures.map(\.departedEarlier) == [false, false], "\(actions)")
        if let last = departures.last {
            let after = last.time - samples[0].fix.time - 234
            #expect(after >= 10 && after <= 20, "left \(after) s after driving off the second time")
        }
    }

    @Test("a stop's radius never shrinks below the fix's error; the exit border is 1.5× that")
    func radiusFollowsError() {
        #expect(GeofenceWatch.effectiveRadius(100, horizontalError: 17) == 100)
        #expect(GeofenceWatch.effectiveRadius(50, horizontalError: 80) == 80)
        #expect(GeofenceWatch().exitBorder(100, horizontalError: nil) == 150)
        // 90 m off, error 120 m: inside, and standing there arrives at once.
        var watch = GeofenceWatch()
        let target = Self.target(north: 90, radius: 50)
        let origin = SyntheticReceiver.origin
        let sample = GeofenceWatch.Sample(time: 0, lat: origin.lat, lng: origin.lon, speed: 0, horizontalError: 120)
        #expect(Self.arrivals(watch.observe(sample, motion: .stationary, targets: [target])).count == 1)
        #expect(watch.observe(sample, motion: .stationary, targets: [target]).isEmpty, "reported once")
    }
}
