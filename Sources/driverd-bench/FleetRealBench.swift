import ArgumentParser
import BackendContract
import DispatchSimCore
import DriverAPI
import DriverDomain
import DriverStore
import Foundation

/// Real driverd processes, each with its own state directory, driver and ping backlog (no gpsd), booting
/// together into a backend outage (dispatch-sim refusing connections) and then meeting its admission control
/// (C new connections a second): the storm as dispatch-sim counts it, and every ping stored once.
struct FleetRealBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "fleet-real", abstract: "Real driverd processes through an outage.")

    @Option(help: "Directory of the release binaries.") var bin: String
    @Option(help: "driverd processes.") var units = 100
    @Option(help: "New connections dispatch-sim takes a second (C).") var capacity = 5.0
    @Option(help: "The outage after the units boot, seconds.") var outageSeconds = 60.0
    @Option(help: "Pings waiting in each unit's outbox (10 minutes at 1 Hz).") var backlog = 600
    @Option(help: "Give up this long after the outage, seconds.") var timeout = 600.0
    @Flag(help: "Keep the units' directories, each with its journal (driverd.log, debug level), and print where.") var keep = false
    @Option(help: "Write dispatch-sim's counts of each second here (JSON), seconds counted from the outage's end.") var series: String?

    func run() async throws {
        let directory = try makeTemporaryDirectory()
        defer {
            if keep { say("the units' directories and journals: \(directory)") } else {
                try? FileManager.default.removeItem(atPath: directory)  // a scratch directory: one left behind harms no figure
            }
        }
        let scenario = Scenario(
            drivers: (1...units).map { Scenario.Driver(id: "drv-\($0)", username: "rider\($0)", password: "pw-\($0)") }, tasks: [])
        try JSONEncoder().encode(scenario).write(to: URL(fileURLWithPath: directory + "/scenario.json"))
        let sim = try SimServerProcess(bin: bin, arguments: ["--scenario", directory + "/scenario.json", "--admit-connections", "\(capacity)"])
        defer { sim.stop() }
        try await sim.post("/sim/faults/refuse", ["seconds": outageSeconds])
        let outageEnds = Date().timeIntervalSince1970 + outageSeconds
        say("\(units) driverd processes (no gpsd, \(backlog) pings queued each), booting together into a \(Int(outageSeconds))-s outage;")
        say("dispatch-sim then takes C = \(FleetBench.format(capacity)) new connections a second: theoretical minimum units / C = \(FleetBench.format(Double(units) / capacity)) s")

        var daemons: [Process] = []
        defer {
            for daemon in daemons { daemon.terminate() }
            for daemon in daemons { daemon.waitUntilExit() }
        }
        let start = 1_795_852_800.0
        for unit in 1...units {
            let state = directory + "/u\(unit)"
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
            let recorder = PingRecorder(store: try Store(directory: state))
            for index in 0..<backlog {
                let time = start + Double(index)
                let fix = Fix(time: time, latitude: 49 + Double(unit) * 1e-3, longitude: 12 + Double(index) * 1e-5, speed: 0, horizontalError: 4, mode: 3)
                recorder.append(PingRecord(fix: fix, motion: .stationary, reason: .interval, recordedAt: time), now: 0, nextSampleIn: 100)
            }
            recorder.flush()
            try """
                [backend]
                url = "\(sim.base)"
                username = "rider\(unit)"
                password = "pw-\(unit)"
                [shift]
                auto_start = true
                [uplink]
                fleet_size = \(units)
                backend_connect_rate = \(capacity)
                """.write(toFile: state + "/driverd.toml", atomically: true, encoding: .utf8)
            daemons.append(try spawn(bin + "/driverd", [
                "--config", state + "/driverd.toml", "--socket", state + "/s.sock", "--state-dir", state, "--gpsd", "127.0.0.1:1",
                "--log-target", "stderr", "--log-level", keep ? "debug" : "error",
            ], quiet: true, log: keep ? state + "/driverd.log" : nil))
        }

        let expected = units * backlog
        var drainedAt: Double?
        var half: Double?, most: Double?
        while Date().timeIntervalSince1970 < outageEnds + timeout {
            try await Task.sleep(for: .milliseconds(500))
            // While dispatch-sim refuses connections, a new one for /sim/ is refused too: the expected answer.
            guard Date().timeIntervalSince1970 > outageEnds else { continue }
            let stats = try await sim.stats()
            let since = Date().timeIntervalSince1970 - outageEnds
            if half == nil, stats.uniquePings * 2 >= expected { half = since }
            if most == nil, stats.uniquePings * 100 >= expected * 99 { most = since }
            if stats.uniquePings >= expected {
                drainedAt = since
                break
            }
        }
        let stats = try await sim.stats()
        let admission: AdmissionStatusView = try await sim.get("/sim/admission")
        let endSecond = Int(outageEnds.rounded(.down))
        if let series {
            let rows = admission.seconds.map { "[\($0.second - endSecond), \($0.connectionAttempts), \($0.connectionsAccepted), \($0.refused), \($0.requests)]" }
            try ("[\n" + rows.joined(separator: ",\n") + "\n]\n").write(toFile: series, atomically: true, encoding: .utf8)
        }
        let after = admission.seconds.filter { $0.second >= endSecond + 10 }
        let first = admission.seconds.filter { $0.second >= endSecond && $0.second < endSecond + 10 }
        let during = admission.seconds.filter { $0.second < endSecond }
        say("connection attempts a second: peak during the outage \(during.map(\.connectionAttempts).max() ?? 0), "
            + "first 10 s after \(first.map(\.connectionAttempts).max() ?? 0), later \(after.map(\.connectionAttempts).max() ?? 0) "
            + "(\(FleetBench.format(Double(after.map(\.connectionAttempts).max() ?? 0) / capacity, decimals: 2)) C)")
        say("connections taken a second, peak: \(admission.seconds.map(\.connectionsAccepted).max() ?? 0) (the limit: \(FleetBench.format(capacity)))")
        let attempts = admission.seconds.map(\.connectionAttempts).reduce(0, +)
        say("attempts per unit: \(FleetBench.format(Double(attempts) / Double(units))); refused per unit: "
            + "\(FleetBench.format(Double(admission.seconds.map(\.refused).reduce(0, +)) / Double(units), decimals: 2))")
        say("pings stored: \(stats.uniquePings) of \(expected) (lost \(expected - stats.uniquePings)); stored twice: \(stats.pingsReceived - stats.uniquePings); "
            + "batches repeated (stored once): \(stats.duplicateBatches)")
        say("after the outage: 50 % of the pings in \(FleetBench.format(half ?? .infinity)) s, 99 % in \(FleetBench.format(most ?? .infinity)) s, "
            + "all in \(FleetBench.format(drainedAt ?? .infinity)) s (units / C = \(FleetBench.format(Double(units) / capacity)) s)")
        if drainedAt == nil { throw ValidationError("not every ping reached the backend within \(Int(timeout)) s of the outage") }
    }

    /// The part of `GET /sim/admission` read here.
    struct AdmissionStatusView: Decodable {
        var seconds: [AdmissionSecond]
    }
}
