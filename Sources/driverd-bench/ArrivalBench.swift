import ArgumentParser
import DriverAPI
import DriverDomain
import NMEASynth

/// Arrival detection and the odometer over synthesised drives, through the daemon's own pure rules (fix filter,
/// motion detector, geofence watch, odometer), many seeds: the delay from the vehicle stopping to the arrival,
/// beside the dwell it waits out; the odometer's error on a long drive, beside a client that sums the distances
/// between the fixes gpsd reports.
struct ArrivalBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "arrivals", abstract: "Arrival delay and odometer error.")

    @Option(help: "Seeds per case.") var seeds = 100
    @Option(help: "Laps of the 2-km block for the odometer.") var laps = 20

    func run() {
        say("Arrival after stopping, the demo route (restaurant 40 s, customer 60 s), \(seeds) seeds per scatter, radius 100 m, dwell 20 s")
        for sigma in [1.5, 5.0, 10.0] {
            var delays: [Double] = [], missed = 0, extra = 0
            for seed in 1...UInt64(seeds) {
                var route = RoutePresets.demo
                route.noise = sigma
                route.seed = seed
                let result = Self.arrivals(route)
                delays += result.delays
                missed += result.missed
                extra += result.extra
            }
            delays.sort()
            say("scatter σ \(sigma) m: delay p50 \(Self.fixed(Self.percentile(delays, 0.5))) s, p95 \(Self.fixed(Self.percentile(delays, 0.95))) s "
                + "(baseline: the 20-s dwell); missed \(missed), extra \(extra) of \(delays.count + missed)")
        }
        say("")
        say("Odometer on a \(laps)-lap drive of the 2-km block (with a 45-s tunnel), \(min(seeds, 20)) seeds")
        for (label, spikes) in [("no spikes", 0.0), ("1 % spikes of 40 m to 2 km", 0.01)] {
            var ours: [Double] = [], naive: [Double] = []
            for seed in 1...UInt64(min(seeds, 20)) {
                var route = RoutePresets.driving(laps: laps)
                route.noise = 5
                route.seed = seed
                route.dropouts = [.init(at: 300, seconds: 45)]
                if spikes > 0 { route.spikes = .init(share: spikes, minMetres: 40, maxMetres: 2000) }
                let (truth, odometer, chords) = Self.odometer(route)
                ours.append(abs(odometer - truth) / truth * 100)
                naive.append(abs(chords - truth) / truth * 100)
            }
            ours.sort()
            naive.sort()
            say("\(label): error p50 \(Self.fixed(Self.percentile(ours, 0.5))) %, max \(Self.fixed(ours.last ?? 0)) % "
                + "(baseline, the sum of distances between reported fixes: p50 \(Self.fixed(Self.percentile(naive, 0.5))) %, max \(Self.fixed(naive.last ?? 0)) %)")
        }
    }

    /// Every stop of the route (a stand after driving) watched as an approaching stop; the delay of each first
    /// arrival from the moment the vehicle stood.
    static func arrivals(_ route: SyntheticRoute) -> (delays: [Double], missed: Int, extra: Int) {
        let epochs = route.epochs()
        var stops: [(target: GeofenceWatch.Target, stoppedAt: Double)] = []
        var previousSpeed = 0.0
        for epoch in epochs {
            if epoch.truthSpeed == 0, previousSpeed > 0 {
                let id = "s\(stops.count)"
                stops.append((GeofenceWatch.Target(stopId: id, taskId: id, lat: epoch.truth.lat, lng: epoch.truth.lon, radius: 100, stage: .approaching),
                              route.startTime + epoch.elapsed))
            }
            previousSpeed = epoch.truthSpeed
        }
        var filter = FixFilter(), detector = MotionDetector(), watch = GeofenceWatch()
        var arrived: [String: Double] = [:], extra = 0
        for epoch in epochs {
            guard let fix = epoch.fix else { continue }
            switch filter.evaluate(fix) {
            case .accept, .reanchor: break
            case .duplicate, .reject: continue
            }
            _ = detector.observe(fix)
            for case .arrived(let stopId, _, _, _, let time) in watch.observe(.init(fix), motion: detector.gpsMotion, targets: stops.map(\.target)) {
                if arrived[stopId] == nil { arrived[stopId] = time } else { extra += 1 }
            }
        }
        let delays = stops.compactMap { stop in arrived[stop.target.stopId].map { $0 - stop.stoppedAt } }
        return (delays, stops.count - delays.count, extra)
    }

    static func odometer(_ route: SyntheticRoute) -> (truth: Double, odometer: Double, chords: Double) {
        var truth = 0.0, chords = 0.0
        var lastTruth: SyntheticRoute.Point?, lastFix: Fix?
        var filter = FixFilter(), detector = MotionDetector(), odometer = Odometer()
        for epoch in route.epochs() {
            if let lastTruth { truth += Geo.distance(latitude1: lastTruth.lat, longitude1: lastTruth.lon, latitude2: epoch.truth.lat, longitude2: epoch.truth.lon) }
            lastTruth = epoch.truth
            guard let fix = epoch.fix else { continue }
            if let lastFix { chords += Geo.distance(lastFix, fix) }
            lastFix = fix
            switch filter.evaluate(fix) {
            case .accept, .reanchor: break
            case .duplicate, .reject: continue
            }
            _ = detector.observe(fix)
            odometer.observe(fix, motion: detector.gpsMotion)
        }
        return (truth, odometer.metres, chords)
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }

    static func fixed(_ value: Double) -> String { TextFormat.fixed(value, decimals: 1) }
}
