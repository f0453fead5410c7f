import ArgumentParser
import Foundation
import NMEASynth

@main
struct NMEASynthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nmea-synth",
        abstract: "Write realistic NMEA 0183 (RMC, GGA, VTG) for a route of waypoints and stops, for gpsfake.")

    @Option(help: "A route as JSON: {start:{lat,lon}, startTime, legs:[{to:{lat,lon},speed}|{stop:SECONDS}], noise, dropouts:[{at,seconds}], seed}.")
    var route: String?

    @Option(help: "A shipped route: demo, parked, driving.")
    var preset: String = "demo"

    @Option(help: "Seconds for the parked preset, laps for the driving preset.")
    var length: Int = 600

    @Option(name: .shortAndLong, help: "Output file (default: standard output).")
    var output: String?

    func run() throws {
        let chosen: SyntheticRoute
        if let route {
            chosen = try JSONDecoder().decode(SyntheticRoute.self, from: Data(contentsOf: URL(fileURLWithPath: route)))
        } else {
            switch preset {
            case "demo": chosen = RoutePresets.demo
            case "parked": chosen = RoutePresets.parked(seconds: length)
            case "driving": chosen = RoutePresets.driving(laps: length)
            default: throw ValidationError("unknown preset '\(preset)': demo, parked or driving")
            }
        }
        let text = "# synthesised by nmea-synth\r\n" + NMEAWriter.log(chosen)
        if let output {
            try text.write(toFile: output, atomically: true, encoding: .utf8)
        } else {
            print(text, terminator: "")
        }
    }
}
