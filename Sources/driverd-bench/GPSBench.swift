import ArgumentParser
import DriverAPI
import Foundation
import JSONRPC
import NMEASynth

/// Real-time replays of a stationary and a moving log through gpsd; the daemon's CPU, wake-ups and peak RSS
/// per minute beside `gpspipe -w` (the minimal gpsd client) on the same gpsd, in the same window.
struct GPSBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "gps", abstract: "GPS cost per minute against gpspipe.")

    @Option(help: "Directory with the driverd binary.") var bin: String
    @Option(help: "Measured seconds per scenario (after a warm-up).") var seconds = 120
    @Option(help: "Warm-up seconds before measuring.") var warmup = 15
    @Option(help: "Stationary receiver log (default: a synthesised parked log).") var stationary: String?
    @Option(help: "Moving receiver log (default: a synthesised drive).") var moving: String?

    func run() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let total = seconds + warmup + 10
        let stationaryLog = try stationary ?? synthesise(RoutePresets.parked(seconds: total), to: directory + "/parked.nmea")
        let movingLog = try moving ?? synthesise(RoutePresets.driving(laps: max(1, total / 200 + 1)), to: directory + "/drive.nmea")
        say("GPS cost per minute, real-time replay, \(seconds) s measured after \(warmup) s warm-up")
        say("baseline: gpspipe -w on the same gpsd in the same window; driverd with default settings (adaptive watch)")
        say(pad("scenario", 12) + pad("process", 12) + pad("cpu s/min", 11) + pad("wakeups/min", 13) + pad("peak RSS MB", 13) + "pings")
        for (name, log) in [("stationary", stationaryLog), ("moving", movingLog)] {
            try measure(name: name, log: log, directory: directory)
        }
    }

    private func synthesise(_ route: SyntheticRoute, to path: String) throws -> String {
        try NMEAWriter.log(route).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func measure(name: String, log: String, directory: String) throws {
        let delay = try gpsfakeRealTimeDelay(log: log)
        let port = Int.random(in: 30000...39000)
        let scratch = directory + "/\(name)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let fake = try spawn("/usr/bin/gpsfake", ["-q", "-n", "-P", String(port), "-c", String(format: "%.4f", delay), log], environment: ["TMPDIR": scratch])
        defer {
            fake.interrupt()
            kill(fake.processIdentifier, SIGKILL)
            fake.waitUntilExit()
            _ = try? spawn("/usr/bin/pkill", ["-9", "-f", "gpsd .*-S \(port)"]).waitUntilExit()
        }
        usleep(1_500_000)
        let socket = scratch + "/driverd.sock"
        try "[shift]\nauto_start = true\n".write(toFile: scratch + "/shift.toml", atomically: true, encoding: .utf8)
        let daemon = try spawn(bin + "/driverd", [
            "--socket", socket, "--state-dir", scratch + "/state", "--config", scratch + "/shift.toml",
            "--gpsd", "127.0.0.1:\(port)", "--log-level", "warning", "--log-target", "stderr",
        ])
        let pipe = try spawn("/usr/bin/gpspipe", ["-w", "127.0.0.1:\(port)"], quiet: true)
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
            // gpspipe ignores SIGTERM while it waits on gpsd.
            kill(pipe.processIdentifier, SIGKILL)
            pipe.waitUntilExit()
        }
        try waitForSocket(socket)
        sleep(UInt32(warmup))
        let start = (ProcessSample.read(pid: daemon.processIdentifier), ProcessSample.read(pid: pipe.processIdentifier))
        let pingsBefore = try pings(socket)
        sleep(UInt32(seconds))
        let end = (ProcessSample.read(pid: daemon.processIdentifier), ProcessSample.read(pid: pipe.processIdentifier))
        let pingsAfter = try pings(socket)
        let minutes = Double(seconds) / 60
        for (label, a, b, pingText) in [("driverd", start.0, end.0, "\(pingsAfter - pingsBefore)"), ("gpspipe -w", start.1, end.1, "-")] {
            guard let a, let b else { continue }
            say(pad(name, 12) + pad(label, 12)
                + pad(String(format: "%.3f", (b.cpuSeconds - a.cpuSeconds) / minutes), 11)
                + pad(String(format: "%.1f", Double(b.contextSwitches - a.contextSwitches) / minutes), 13)
                + pad(String(format: "%.1f", Double(b.peakRSSKiB) / 1024), 13) + pingText)
        }
    }

    private func pings(_ socket: String) throws -> Int {
        let reply = try RPCClient(socketPath: socket).call(Methods.gpsStatus, NoParams())
        return reply.pingsRecorded + reply.pingsPending
    }

    private func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(1, width - text.count)) }
}

/// gpsfake's `-c` is a delay per sentence: the one that spreads a log's sentences over its own duration (from
/// the first and last RMC clock), so gpsd sees it in real time.
func gpsfakeRealTimeDelay(log: String) throws -> Double {
    let text = try String(decoding: Data(contentsOf: URL(fileURLWithPath: log)), as: UTF8.self)
    let lines = text.split(whereSeparator: \.isNewline).filter { $0.contains("$") }
    let clocks = lines.compactMap { line -> Double? in
        let fields = line.split(separator: ",", omittingEmptySubsequences: false)
        guard fields.first?.hasSuffix("RMC") == true, fields.count > 1, fields[1].count >= 6,
              let hh = Double(fields[1].prefix(2)), let mm = Double(fields[1].dropFirst(2).prefix(2)),
              let ss = Double(fields[1].dropFirst(4))
        else { return nil }
        return hh * 3600 + mm * 60 + ss
    }
    let duration = max(1, (clocks.last ?? 0) - (clocks.first ?? 0))
    return duration / Double(max(1, lines.count))
}
