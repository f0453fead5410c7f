import ArgumentParser
import AsyncHTTPClient
import DispatchSimCore
import DriverAPI
import DriverDomain
import Foundation
import JSONRPC
import NMEASynth

/// A drive with injected multipath spikes (and a tunnel), replayed through gpsd into driverd and on to
/// dispatch-sim: how many spikes reach the backend, beside a client that forwards what gpsd reports (every one).
struct GPSQualityBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "gps-quality", abstract: "Spikes that reach the backend.")

    @Option(help: "Directory with the driverd and dispatch-sim binaries.") var bin: String
    @Option(help: "Laps of the 2-km block.") var laps = 6
    @Option(help: "Share of fixes thrown off by a spike.") var spikes = 0.01

    func run() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }  // a scratch directory: one left behind harms no figure
        var route = RoutePresets.driving(laps: laps)
        route.spikes = .init(share: spikes, minMetres: 150, maxMetres: 2000)
        route.dropouts = [.init(at: 300, seconds: 45)]
        let epochs = route.epochs()
        let log = directory + "/spikes.nmea"
        try NMEAWriter.log(route).write(toFile: log, atomically: true, encoding: .utf8)
        let sim = try SimServerProcess(bin: bin)
        defer { sim.stop() }
        let port = Int.random(in: 30000...39000)
        let fake = try spawn("/usr/bin/gpsfake", ["-1", "-q", "-n", "-P", String(port), "-c", "0.01", log], environment: ["TMPDIR": directory])
        defer {
            kill(fake.processIdentifier, SIGKILL)
            fake.waitUntilExit()
            // No gpsd left to kill is the expected answer.
            _ = try? spawn("/usr/bin/pkill", ["-9", "-f", "gpsd .*-S \(port)"]).waitUntilExit()
        }
        usleep(1_500_000)
        let socket = directory + "/driverd.sock"
        try """
            [shift]
            auto_start = true
            [gps]
            watch = "continuous"
            [backend]
            url = "\(sim.base)"
            username = "rider1"
            password = "demo-password"
            """.write(toFile: directory + "/config.toml", atomically: true, encoding: .utf8)
        let daemon = try spawn(bin + "/driverd", [
            "--socket", socket, "--state-dir", directory + "/state", "--config", directory + "/config.toml",
            "--gpsd", "127.0.0.1:\(port)", "--log-level", "warning", "--log-target", "stderr",
        ])
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        try waitForSocket(socket)
        // The replay is over once no fix came for 3 s; then everything recorded is sent.
        var gps = try RPCClient(socketPath: socket).call(Methods.gpsStatus, NoParams())
        for _ in 0..<600 where !(gps.fixesSeen > 100 && (gps.lastFixAge ?? 0) > 3) {
            usleep(200_000)
            gps = try RPCClient(socketPath: socket).call(Methods.gpsStatus, NoParams())
        }
        for _ in 0..<50 {
            let outbox = try RPCClient(socketPath: socket, timeout: .seconds(60)).call(Methods.outboxFlush, NoParams())
            if outbox.pings == 0 { break }
        }
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: sim.base + "/sim/drivers/drv-1/locations"), timeout: .seconds(10))
        let received = try JSONDecoder().decode(DriverLocations.self, from: Data((try await response.body.collect(upTo: 64 << 20)).readableBytesView)).pings
        let truth = Dictionary(epochs.map { (($0.elapsed + route.startTime).rounded(), $0.truth) }, uniquingKeysWith: { a, _ in a })
        let spikesReceived = received.filter { ping in
            guard let spot = truth[ping.timestamp.rounded()] else { return true }
            return Geo.distance(latitude1: ping.lat, longitude1: ping.lng, latitude2: spot.lat, longitude2: spot.lon) > 50
        }.count
        let injected = epochs.filter(\.spike).count
        let rejected = (gps.fixesRejected ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        say("Fix quality: a \(epochs.count)-s drive with \(Int(spikes * 100)) % spikes of 150 m to 2 km and a 45-s tunnel, through gpsd (accelerated)")
        say("baseline: a client that forwards every fix gpsd reports sends all \(injected) spikes")
        say("driverd: \(gps.fixesSeen) fixes seen, rejected: \(rejected.isEmpty ? "none" : rejected); \(gps.reanchors ?? 0) re-anchors")
        say("backend received \(received.count) pings; spikes among them: \(spikesReceived) of \(injected) injected (target 0)")
    }
}
