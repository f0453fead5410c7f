import DriverAPI
import DriverDomain
import NMEASynth
import Testing

@Suite("NMEA synthesiser")
struct NMEASynthTests {
    /// The XOR of the characters between `$` and `*` must equal the two hex digits after `*`.
    static func checksumValid(_ sentence: String) -> Bool {
        guard sentence.hasPrefix("$"), let star = sentence.lastIndex(of: "*") else { return false }
        let body = sentence[sentence.index(after: sentence.startIndex)..<star]
        let expected = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
        return UInt8(sentence[sentence.index(after: star)...], radix: 16) == expected
    }

    @Test("known sentence checksum")
    func knownChecksum() {
        // From a real receiver log (GPGGA example of the NMEA standard).
        #expect(NMEASynth.NMEAWriter.sentence("GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,") == "$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47")
    }

    @Test("every sentence of the demo route has a valid checksum, RMC/GGA/VTG per second")
    func demoRoute() {
        let lines = NMEAWriter.log(RoutePresets.demo).split(separator: "\r\n").map(String.init)
        #expect(lines.allSatisfy(Self.checksumValid))
        let seconds = RoutePresets.demo.samples().count
        #expect(lines.count == seconds * 3)
        #expect(lines.filter { $0.hasPrefix("$GPRMC") }.count == seconds)
        #expect(lines.filter { $0.hasPrefix("$GPVTG") }.count == seconds)
    }

    @Test("speed and heading follow the legs; stops stand still; dropouts have no fix")
    func samples() {
        let route = SyntheticRoute(
            start: .init(lat: 52.52, lon: 13.405), startTime: 0,
            legs: [.stop(seconds: 5), .drive(to: .init(lat: 52.52085, lon: 13.405), speed: 10), .stop(seconds: 5)],
            dropouts: [.init(at: 2, seconds: 2)])
        let samples = route.samples()
        #expect(samples.count == 5 + 10 + 5)
        #expect(samples[2] == nil && samples[3] == nil)
        #expect(samples[0]?.speed == 0)
        let driving = samples[5...14].compactMap { $0 }
        // 94.5 m at 10 m/s: ten one-second steps of 9.45 m, heading north.
        #expect(driving.count == 10)
        #expect(driving.allSatisfy { abs(($0.speed ?? 0) - 9.45) < 0.05 && abs(($0.track ?? 90) - 0) < 0.5 })
        let end = samples.last!!
        #expect(Geo.distance(end, Fix(time: 0, latitude: 52.52085, longitude: 13.405)) < 0.5)
    }

    @Test("coordinates and times format as NMEA expects")
    func formats() {
        let lines = NMEAWriter.epoch(Fix(time: 1_795_852_800, latitude: -33.5, longitude: -70.25, altitude: 500, speed: 5.144, track: 12.3, mode: 3, satellitesUsed: 7), time: 1_795_852_800)
        #expect(lines[0].hasPrefix("$GPRMC,080000.00,A,3330.0000,S,07015.0000,W,10.00,12.3,281126,,,A*"))
        #expect(lines[1].hasPrefix("$GPGGA,080000.00,3330.0000,S,07015.0000,W,1,07,0.9,500.0,M"))
        #expect(NMEAWriter.epoch(nil, time: 0)[0].hasPrefix("$GPRMC,000000.00,V,"))
    }

    @Test("noise is deterministic for a seed")
    func deterministic() {
        #expect(RoutePresets.parked(seconds: 30).samples() == RoutePresets.parked(seconds: 30).samples())
    }

    @Test("a 10 Hz receiver: ten epochs a second, times in hundredths, the same track")
    func tenHertz() {
        var route = RoutePresets.driving(laps: 1)
        let oneHertz = route.epochs()
        route.hz = 10
        let tenHertz = route.epochs()
        #expect(tenHertz.count == oneHertz.count * 10)
        #expect(abs(tenHertz[1].fix!.time - tenHertz[0].fix!.time - 0.1) < 1e-6)
        #expect(NMEAWriter.log(route).contains("$GPRMC,080000.10,A,"))
        #expect(Geo.distance(tenHertz.last!.fix!, oneHertz.last!.fix!) < 10)
    }

    @Test("the street preset: 30 s of driving, then parked with scatter and a Doppler speed never above 0.3 m/s")
    func street() {
        let epochs = RoutePresets.street(parkSeconds: 120, sigma: 8).epochs()
        #expect(epochs.count == 30 + 120)
        let parked = epochs.dropFirst(30).compactMap(\.fix)
        #expect(parked.allSatisfy { ($0.speed ?? 1) <= 0.3 })
        let spot = epochs.last!.truth
        let distances = parked.map { Geo.distance(latitude1: $0.latitude, longitude1: $0.longitude, latitude2: spot.lat, longitude2: spot.lon) }
        #expect(distances.max()! > 8 && distances.max()! < 60)
    }

    @Test("spikes, a stale span, a tunnel and a clock offset are where they were asked for")
    func conditions() {
        var route = RoutePresets.driving(laps: 2)
        route.spikes = .init(share: 0.05, minMetres: 150, maxMetres: 2000)
        route.staleSpans = [.init(at: 100, seconds: 20)]
        route.dropouts = [.init(at: 200, seconds: 30)]
        route.clockOffset = -2 * 1024 * 7 * 86400
        let epochs = route.epochs()
        let spikes = epochs.filter(\.spike)
        #expect(spikes.count > epochs.count / 40 && spikes.count < epochs.count / 10)
        for spike in spikes {
            let off = Geo.distance(latitude1: spike.fix!.latitude, longitude1: spike.fix!.longitude, latitude2: spike.truth.lat, longitude2: spike.truth.lon)
            #expect(off > 140 && off < 2020)
        }
        let stale = epochs.filter(\.stale)
        #expect(stale.count == 20 && Set(stale.map { $0.fix!.time }).count == 1)
        #expect(epochs[200..<230].allSatisfy { $0.fix == nil })
        #expect(epochs[0].fix!.time == route.startTime - 2 * 1024 * 7 * 86400)
    }
}
