import ArgumentParser
import DriverAPI
import Foundation
import SQLiteKit
import JSONRPC
import NMEASynth

/// Real-time replays through gpsd: the daemon's CPU, wake-ups and peak RSS per minute beside `gpspipe -w` (the
/// minimal gpsd client) on the same gpsd, in the same window. Scenarios: a stationary and a moving receiver
/// log, a synthetic street (30 s of driving, then parked with scatter; `eph` 17 m), and a 10 Hz receiver
/// driving and parked.
struct GPSBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "gps", abstract: "GPS cost per minute against gpspipe.")

    @Option(help: "Directory with the driverd binary.") var bin: String
    @Option(help: "Measured seconds per receiver-log scenario (after a warm-up).") var seconds = 120
    @Option(help: "Warm-up seconds before measuring.") var warmup = 15
    @Option(help: "Measured seconds parked in the street scenarios (the window starts 80 s after parking).") var streetSeconds = 500
    @Option(help: "Stationary receiver log (default: a synthesised parked log).") var stationary: String?
    @Option(help: "Moving receiver log (default: a synthesised drive).") var moving: String?
    @Option(help: "Scenarios to run, comma-separated: logs, street, 10hz.") var only = "logs,street,10hz"

    /// One replay to measure.
    struct Scenario {
        var name: String
        var log: String
        /// Seconds from the replay's start to the measured window, and its length.
        var warmup: Int
        var seconds: Int
        /// Seconds from the log's first fix to the parking, for the street scenarios.
        var parkedAt: Double?
        var firstFixTime: Double?
    }

    func run() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }  // a scratch directory: one left behind harms no figure
        let chosen = Set(only.split(separator: ",").map(String.init))
        var scenarios: [Scenario] = []
        if chosen.contains("logs") {
            let total = seconds + warmup + 10
            let stationaryLog = try stationary ?? synthesise(RoutePresets.parked(seconds: total), to: directory + "/parked.nmea")
            let movingLog = try moving ?? synthesise(RoutePresets.driving(laps: max(1, total / 200 + 1)), to: directory + "/drive.nmea")
            scenarios += [
                // Stationary is what the daemon settles into: the window starts once the motion detector may have
                // called it (65 s), as the street scenario's does after parking.
                Scenario(name: "stationary", log: stationaryLog, warmup: max(warmup, 80), seconds: seconds),
                Scenario(name: "moving", log: movingLog, warmup: warmup, seconds: seconds),
            ]
        }
        // Parked for the window plus the 80 s the detector may take and a margin.
        let parkSeconds = streetSeconds + 80 + 15
        if chosen.contains("street") {
            let street = RoutePresets.street(parkSeconds: parkSeconds, sigma: 5)
            scenarios.append(Scenario(
                name: "street", log: try synthesise(street, to: directory + "/street.nmea"), warmup: 30 + 80, seconds: streetSeconds,
                parkedAt: 30, firstFixTime: street.startTime))
        }
        if chosen.contains("10hz") {
            var drive = RoutePresets.driving(laps: max(1, (seconds + warmup + 10) / 160 + 1))
            drive.hz = 10
            var street = RoutePresets.street(parkSeconds: min(parkSeconds, 80 + 15 + seconds), sigma: 5)
            street.hz = 10
            scenarios += [
                Scenario(name: "moving 10Hz", log: try synthesise(drive, to: directory + "/drive10.nmea"), warmup: warmup, seconds: seconds),
                Scenario(
                    name: "street 10Hz", log: try synthesise(street, to: directory + "/street10.nmea"), warmup: 30 + 80, seconds: seconds,
                    parkedAt: 30, firstFixTime: street.startTime),
            ]
        }
        say("GPS cost per minute, real-time replays; baseline: gpspipe -w on the same gpsd in the same window;")
        say("driverd with default settings (adaptive watch). pings/min: recorded in the window. street: 30 s of driving,")
        say("then parked, scatter σ 5 m, eph 17 m; its window starts 80 s after parking, the stationary log's 80 s after")
        say("the start (the motion detector takes up to 65 s to call a vehicle stationary).")
        say(pad("scenario", 13) + pad("process", 12) + pad("cpu s/min", 11) + pad("wakeups/min", 13) + pad("peak RSS MB", 13) + "pings/min")
        for scenario in scenarios { try measure(scenario, directory: directory) }
    }

    private func synthesise(_ route: SyntheticRoute, to path: String) throws -> String {
        try NMEAWriter.log(route).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func measure(_ scenario: Scenario, directory: String) throws {
        let scratch = directory + "/\(scenario.name.replacingOccurrences(of: " ", with: "-"))"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let replayStart = Date()
        let fake = try RealTimeReceiver(log: scenario.log, scratch: scratch)
        defer { fake.stop() }
        let port = fake.port
        usleep(1_500_000)
        let socket = scratch + "/driverd.sock"
        try "[shift]\nauto_start = true\n".write(toFile: scratch + "/shift.toml", atomically: true, encoding: .utf8)
        let daemon = try spawn(bin + "/driverd", [
            "--socket", socket, "--state-dir", scratch + "/state", "--config", scratch + "/shift.toml",
            "--gpsd", "127.0.0.1:\(port)", "--log-level", "warning", "--log-target", "stderr",
        ])
        let pipe = try spawn("/usr/bin/gpspipe", ["-w", "127.0.0.1:\(port)"], quiet: true)
        defer {
            if daemon.isRunning {
                daemon.terminate()
                daemon.waitUntilExit()
            }
            // gpspipe ignores SIGTERM while it waits on gpsd.
            kill(pipe.processIdentifier, SIGKILL)
            pipe.waitUntilExit()
        }
        try waitForSocket(socket)
        let untilWindow = Double(scenario.warmup) - Date().timeIntervalSince(replayStart)
        if untilWindow > 0 { usleep(UInt32(untilWindow * 1e6)) }
        // The bench's own calls stay out of the window: each wakes the daemon too.
        let pingsBefore = try pings(socket)
        let start = (ProcessSample.read(pid: daemon.processIdentifier), ProcessSample.read(pid: pipe.processIdentifier))
        sleep(UInt32(scenario.seconds))
        let end = (ProcessSample.read(pid: daemon.processIdentifier), ProcessSample.read(pid: pipe.processIdentifier))
        let pingsAfter = try pings(socket)
        let gps = try RPCClient(socketPath: socket).call(Methods.gpsStatus, NoParams())
        let minutes = Double(scenario.seconds) / 60
        let pingRate = String(format: "%.2f", Double(pingsAfter - pingsBefore) / minutes)
        for (label, a, b, pingText) in [("driverd", start.0, end.0, pingRate), ("gpspipe -w", start.1, end.1, "-")] {
            guard let a, let b else { continue }
            say(pad(scenario.name, 13) + pad(label, 12)
                + pad(String(format: "%.3f", (b.cpuSeconds - a.cpuSeconds) / minutes), 11)
                + pad(String(format: "%.1f", Double(b.wakeUps - a.wakeUps) / minutes), 13)
                + pad(String(format: "%.1f", Double(b.peakRSSKiB) / 1024), 13) + pingText)
        }
        let rejected = (gps.fixesRejected ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        say("  fixes: \(gps.fixesSeen) seen, \(gps.fixesAccepted ?? 0) accepted, rejected: \(rejected.isEmpty ? "none" : rejected)")
        if let parkedAt = scenario.parkedAt, let first = scenario.firstFixTime {
            daemon.terminate()
            daemon.waitUntilExit()
            try reportParking(state: scratch + "/state/driverd.sqlite", parkedAt: first + parkedAt)
        }
    }

    /// When the daemon called the vehicle stationary after parking (its pings say, in receiver time).
    private func reportParking(state: String, parkedAt: Double) throws {
        let rows = try Database(path: state, readOnly: true)
            .rows(sql: "SELECT fix_time, motion FROM ping WHERE fix_time >= ? ORDER BY fix_time", arguments: [parkedAt])
        guard let stationary = rows.first(where: { $0.value("motion") == "stationary" }) else {
            say("  parked: never stationary (target: within 75 s)")
            return
        }
        let at: Double = stationary.value("fix_time") ?? parkedAt
        let after = rows.filter { ($0.value("fix_time") ?? 0) > at }
        let last: Double = after.last?.value("fix_time") ?? at
        let perMinute = last > at ? Double(after.count) / ((last - at) / 60) : 0
        let moving = after.filter { $0.value("motion") != "stationary" }.count
        say("  parked: stationary \(String(format: "%.0f", at - parkedAt)) s after parking (target ≤ 75); then "
            + "\(String(format: "%.2f", perMinute)) pings/min (target ≤ 6.5), \(moving) pings moving")
    }

    private func pings(_ socket: String) throws -> Int {
        let reply = try RPCClient(socketPath: socket).call(Methods.gpsStatus, NoParams())
        return reply.pingsRecorded + reply.pingsPending
    }

    private func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(1, width - text.count)) }
}
