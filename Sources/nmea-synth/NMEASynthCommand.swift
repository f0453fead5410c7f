import ArgumentParser
import Foundation
import NMEASynth

@main
struct NMEASynthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nmea-synth",
        abstract: "Write realistic NMEA 0183 (RMC, GGA, VTG) for a route of waypoints and stops, for gpsfake.",
        discussion: """
            The street's conditions are options, so every case is a replayable file:
              nmea-synth --preset street --length 600 --sigma 8            parked after 30 s of driving, 8 m scatter
              nmea-synth --preset driving --length 3 --spikes 0.01          1 % multipath spikes of 150 m to 2 km
              nmea-synth --preset driving --hz 10                            a 10 Hz receiver
              nmea-synth --preset driving --dropout 60:45                    a 45-s tunnel a minute in
              nmea-synth --preset street --stale 120:300                     one stale fix repeated for 5 minutes
              nmea-synth --preset driving --clock-offset=-1238630400        a double GPS week rollover
              nmea-synth --preset street --start-time now                    fixes dated from now on
            """)

    @Option(help: "A route as JSON: {start:{lat,lon}, startTime, legs:[{to:{lat,lon},speed}|{stop:SECONDS}|{ramp:M_PER_S2,speed}], noise, dropouts:[{at,seconds}], seed, hz, hdop, drift, spikes:{share,minMetres,maxMetres}, clockOffset, staleSpans:[{at,seconds}]}.")
    var route: String?

    @Option(help: "A shipped route: demo, parked, street (30 s of driving, then parked), driving.")
    var preset: String = "demo"

    @Option(help: "Seconds parked for the parked and street presets, laps for the driving preset.")
    var length: Int = 600

    @Option(help: "Position scatter (standard deviation per axis), metres.")
    var sigma: Double?

    @Option(help: "Epochs per second (1, 5, 10).")
    var hz: Double?

    @Option(help: "The HDOP the receiver reports (gpsd's eph is 19 × HDOP).")
    var hdop: Double?

    @Option(help: "Slow wander of the scatter's centre, metres per √second.")
    var drift: Double?

    @Option(help: "Share of fixes thrown off by a multipath spike (0.01 = 1 %).")
    var spikes: Double?

    @Option(help: "Spike distance, metres: MIN-MAX.")
    var spikeMetres: String = "150-2000"

    @Option(help: "Seconds added to every time the receiver reports (a wrong clock; -1238630400 is two 1024-week rollovers).")
    var clockOffset: Double?

    @Option(help: "A span without a fix (a tunnel), AT:SECONDS from the start; repeatable.")
    var dropout: [String] = []

    @Option(help: "A span where the receiver repeats its last fix unchanged, AT:SECONDS; repeatable.")
    var stale: [String] = []

    @Option(help: "Time of the first fix: unix seconds, or 'now'.")
    var startTime: String?

    @Option(help: "Seed of the noise.")
    var seed: UInt64?

    @Option(name: .shortAndLong, help: "Output file (default: standard output).")
    var output: String?

    func run() throws {
        var chosen: SyntheticRoute
        if let route {
            chosen = try JSONDecoder().decode(SyntheticRoute.self, from: Data(contentsOf: URL(fileURLWithPath: route)))
        } else {
            switch preset {
            case "demo": chosen = RoutePresets.demo
            case "parked": chosen = RoutePresets.parked(seconds: length)
            case "street": chosen = RoutePresets.street(parkSeconds: length)
            case "driving": chosen = RoutePresets.driving(laps: length)
            default: throw ValidationError("unknown preset '\(preset)': demo, parked, street or driving")
            }
        }
        if let sigma { chosen.noise = sigma }
        if let hz {
            guard (0.1...20).contains(hz) else { throw ValidationError("--hz: from 0.1 to 20") }
            chosen.hz = hz
        }
        if let hdop { chosen.hdop = hdop }
        if let drift { chosen.drift = drift }
        if let spikes {
            let bounds = spikeMetres.split(separator: "-").compactMap { Double($0) }
            guard bounds.count == 2, bounds[0] <= bounds[1] else { throw ValidationError("--spike-metres: MIN-MAX, e.g. 150-2000") }
            chosen.spikes = .init(share: spikes, minMetres: bounds[0], maxMetres: bounds[1])
        }
        if let clockOffset { chosen.clockOffset = clockOffset }
        chosen.dropouts += try dropout.map(Self.span)
        chosen.staleSpans += try stale.map(Self.span)
        if let startTime {
            if startTime == "now" {
                chosen.startTime = Date().timeIntervalSince1970.rounded()
            } else if let seconds = Double(startTime) {
                chosen.startTime = seconds
            } else {
                throw ValidationError("--start-time: unix seconds or 'now'")
            }
        }
        if let seed { chosen.seed = seed }
        let text = "# synthesised by nmea-synth\r\n" + NMEAWriter.log(chosen)
        if let output {
            try text.write(toFile: output, atomically: true, encoding: .utf8)
        } else {
            print(text, terminator: "")
        }
    }

    static func span(_ text: String) throws -> SyntheticRoute.Dropout {
        let parts = text.split(separator: ":").compactMap { Int($0) }
        guard parts.count == 2, parts[0] >= 0, parts[1] > 0 else { throw ValidationError("a span is AT:SECONDS, e.g. 60:45") }
        return .init(at: parts[0], seconds: parts[1])
    }
}
