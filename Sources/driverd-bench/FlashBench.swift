import ArgumentParser
import DriverAPI
import DriverDomain
import DriverStore
import Foundation
import JSONRPC
import NMEASynth
import SQLiteKit
import Synchronization

/// What driverd makes the kernel write to the flash per hour (`/proc/PID/io` write_bytes, and its fsync and
/// fdatasync calls counted by perf), parked online, moving online and moving with the backend away, each beside a
/// baseline in the same run and window: one SQLite commit per ping (synced, WAL, driverd's schema) at the same
/// rate. Also driverd's journal lines while nothing happens (parked, online, on shift, default log level).
/// The three scenarios run at once (real time: the rates are the daemon's), each with its own gpsd.
struct FlashBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "flash", abstract: "Bytes written to flash per hour, against one commit per ping.")

    @Option(help: "Directory with the driverd, dispatch-sim and driverd-bench binaries.") var bin: String
    @Option(help: "Measured seconds per scenario (after its warm-up).") var seconds = 240

    struct Scenario {
        var name: String
        var route: SyntheticRoute
        var online: Bool
        /// From the replay's start to the window: a parked unit is called stationary within 65 s.
        var warmup: Int
        /// The baseline's commits per second (driverd's sampling rate in this scenario).
        var rate: Double
    }

    struct Row {
        var writeBytes: Int
        var syncs: Int
        var lines: Int
        var pings: Int
        var pingBytes: Int
    }

    func run() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }  // a scratch directory: one left behind harms no figure
        let sim = try SimServerProcess(bin: bin)
        defer { sim.stop() }
        let total = seconds + 120
        let scenarios = [
            Scenario(name: "parked online", route: RoutePresets.parked(seconds: total), online: true, warmup: 90, rate: 0.1),
            Scenario(name: "moving online", route: RoutePresets.driving(laps: total / 160 + 1), online: true, warmup: 30, rate: 1),
            Scenario(name: "moving offline", route: RoutePresets.driving(laps: total / 160 + 1), online: false, warmup: 30, rate: 1),
        ]
        say("Flash writes per hour (kernel write_bytes of the process, fsync + fdatasync calls), \(seconds) s windows, real time;")
        say("baseline: one commit per ping, synced (WAL, driverd's schema), at the scenario's rate, in the same window.")
        say("Goals: parked online ≤ 1 MB/h, moving online ≤ 4 MB/h, moving offline within 2× of (the pings' bytes + a page per commit);")
        say("journal at the default level while parked online: ≤ 20 lines an hour.")
        let outcomes = Mutex<[Int: (Row, Row)]>([:])
        let threads = scenarios.indices.map { index in
            let scenario = scenarios[index], base = sim.base
            return Thread {
                let backend = scenario.online ? base : "http://127.0.0.1:1"
                do {
                    let outcome = try measure(scenario, scratch: directory + "/\(index)", backend: backend)
                    outcomes.withLock { $0[index] = outcome }
                } catch {
                    say("\(scenario.name): \(error)")
                }
            }
        }
        for thread in threads { thread.start() }
        for thread in threads { while !thread.isFinished { usleep(100_000) } }
        say(pad("scenario", 16) + pad("process", 22) + pad("MB/h", 9) + pad("syncs/h", 10) + pad("journal lines/h", 17) + "ratio")
        let hour = 3600 / Double(seconds)
        for (index, scenario) in scenarios.enumerated() {
            guard let (daemon, baseline) = outcomes.withLock({ $0[index] }) else {
                say(pad(scenario.name, 16) + "failed")
                continue
            }
            let ratio = baseline.writeBytes > 0 ? String(format: "%.3f×", Double(daemon.writeBytes) / Double(baseline.writeBytes)) : "-"
            say(pad(scenario.name, 16) + pad("driverd", 22) + pad(String(format: "%.2f", Double(daemon.writeBytes) * hour / 1e6), 9)
                + pad(String(format: "%.0f", Double(daemon.syncs) * hour), 10) + pad(String(format: "%.0f", Double(daemon.lines) * hour), 17) + ratio)
            say(pad("", 16) + pad("one commit per ping", 22) + pad(String(format: "%.2f", Double(baseline.writeBytes) * hour / 1e6), 9)
                + pad(String(format: "%.0f", Double(baseline.syncs) * hour), 10) + pad("-", 17) + "1×")
            if !scenario.online {
                // The least a durable group commit can cost: the pings themselves and one 4 KiB page per synced commit.
                let least = daemon.pingBytes + daemon.syncs * 4096
                say(pad("", 16) + "pings in the window: \(daemon.pings), \(daemon.pingBytes) bytes of rows; the pings' bytes + a page per sync: "
                    + String(format: "%.2f MB/h; driverd %.2f× that (goal ≤ 2×)", Double(least) * hour / 1e6, least > 0 ? Double(daemon.writeBytes) / Double(least) : 0))
            }
        }
    }

    /// One scenario: driverd and the baseline side by side over the same window.
    private func measure(_ scenario: Scenario, scratch: String, backend: String) throws -> (Row, Row) {
        try FileManager.default.createDirectory(atPath: scratch + "/state", withIntermediateDirectories: true)
        let log = scratch + "/route.nmea"
        try NMEAWriter.log(scenario.route).write(toFile: log, atomically: true, encoding: .utf8)
        let fake = try RealTimeReceiver(log: log, scratch: scratch)
        defer { fake.stop() }
        let port = fake.port
        usleep(1_500_000)
        let started = Date()
        let socket = scratch + "/driverd.sock"
        try """
            [shift]
            auto_start = true
            [backend]
            url = "\(backend)"
            username = "rider1"
            password = "demo-password"

            """.write(toFile: scratch + "/driverd.toml", atomically: true, encoding: .utf8)
        let stderrPath = scratch + "/driverd.stderr"
        guard FileManager.default.createFile(atPath: stderrPath, contents: nil) else { throw ValidationError("cannot create \(stderrPath)") }
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: bin + "/driverd")
        daemon.arguments = [
            "--socket", socket, "--state-dir", scratch + "/state", "--config", scratch + "/driverd.toml", "--gpsd", "127.0.0.1:\(port)",
            "--log-target", "stderr",
        ]
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle(forWritingAtPath: stderrPath)
        try daemon.run()
        defer {
            if daemon.isRunning {
                daemon.terminate()
                daemon.waitUntilExit()
            }
        }
        try waitForSocket(socket)
        let untilWindow = Double(scenario.warmup) - Date().timeIntervalSince(started)
        if untilWindow > 0 { usleep(UInt32(untilWindow * 1e6)) }
        let baselineDirectory = scratch + "/baseline"
        let baselineOutput = Pipe()
        let baseline = try spawnPiped(bin + "/driverd-bench", [
            "flash-baseline", "--directory", baselineDirectory, "--interval", String(1 / scenario.rate), "--seconds", String(seconds),
        ], stdout: baselineOutput)
        let pingsBefore = try pingsKept(socket)
        let linesBefore = try lineCount(stderrPath)
        let before = try IOSample.read(pid: daemon.processIdentifier)
        let daemonSyncs = try SyncCounter(pid: daemon.processIdentifier, seconds: seconds)
        let baselineSyncs = try SyncCounter(pid: baseline.processIdentifier, seconds: seconds)
        let syncs = daemonSyncs.wait()
        let after = try IOSample.read(pid: daemon.processIdentifier)
        let linesAfter = try lineCount(stderrPath)
        let pingsAfter = try pingsKept(socket)
        let baselineSyncCount = baselineSyncs.wait()
        baseline.waitUntilExit()
        let baselineRow = try JSONDecoder().decode(BaselineRow.self, from: baselineOutput.fileHandleForReading.readDataToEndOfFile())
        daemon.terminate()
        daemon.waitUntilExit()
        let pingBytes = try averagePingBytes(scratch + "/state/driverd.sqlite") * Double(pingsAfter - pingsBefore)
        return (
            Row(writeBytes: after.writeBytes - before.writeBytes, syncs: syncs, lines: linesAfter - linesBefore,
                pings: pingsAfter - pingsBefore, pingBytes: Int(pingBytes)),
            Row(writeBytes: baselineRow.writeBytes, syncs: baselineSyncCount, lines: 0, pings: baselineRow.pings, pingBytes: 0))
    }

    private func pingsKept(_ socket: String) throws -> Int {
        let reply = try RPCClient(socketPath: socket).call(Methods.gpsStatus, NoParams())
        return reply.pingsRecorded
    }

    private func lineCount(_ path: String) throws -> Int {
        try Data(contentsOf: URL(fileURLWithPath: path)).reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
    }

    /// The ping rows' payload, bytes per ping (SQLite's dbstat over the table), from what the database still holds.
    private func averagePingBytes(_ path: String) throws -> Double {
        let db = try Database(path: path, readOnly: true)
        let count = try db.value(Int.self, sql: "SELECT COUNT(*) FROM ping") ?? 0
        guard count > 0 else { return 0 }
        // SQLite built without dbstat throws here: the figure is then missing, never guessed.
        let bytes = try db.value(Int.self, sql: "SELECT SUM(payload) FROM dbstat WHERE name = 'ping'") ?? 0
        return Double(bytes) / Double(count)
    }

    private func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(1, width - text.count)) }
}

/// What the baseline wrote, as it prints it.
struct BaselineRow: Codable {
    var writeBytes: Int
    var pings: Int
}

/// fsync and fdatasync calls of a process over a window: perf counts the syscall tracepoints (nothing is traced).
struct SyncCounter {
    let perf = Process()
    let output = Pipe()

    init(pid: Int32, seconds: Int) throws {
        perf.executableURL = URL(fileURLWithPath: "/usr/bin/perf")
        perf.arguments = [
            "stat", "-x", ",", "-e", "syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync", "-p", String(pid), "--", "sleep", String(seconds),
        ]
        perf.standardOutput = FileHandle.nullDevice
        perf.standardError = output
        try perf.run()
    }

    /// The count, once the window is over.
    func wait() -> Int {
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        perf.waitUntilExit()
        return text.split(separator: "\n").compactMap { Int($0.split(separator: ",").first ?? "") }.reduce(0, +)
    }
}

/// The baseline of `flash`: a ping every `interval` seconds, each in its own synced commit (WAL, `synchronous=FULL`)
/// into a database of driverd's schema; prints its own write_bytes over the run.
struct FlashBaseline: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "flash-baseline", abstract: "One synced commit per ping (the flash bench's baseline).")

    @Option var directory: String
    @Option var interval: Double
    @Option var seconds: Int

    func run() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        _ = try Store(directory: directory)
        let db = try Database(path: directory + "/driverd.sqlite", readOnly: false)
        try db.execute(sql: "PRAGMA synchronous = FULL")
        let before = try IOSample.read(pid: getpid())
        let start = Date()
        var pings = 0
        var time = 1_795_852_800.0
        while Date().timeIntervalSince(start) < Double(seconds) {
            let fix = Fix(
                time: time, latitude: 52.52 + Double(pings) * 1e-5, longitude: 13.405, altitude: 34, speed: 12, track: 90, climb: 0,
                horizontalError: 3, verticalError: 5, mode: 3, satellitesUsed: 9)
            let ping = PingRecord(fix: fix, motion: .moving, reason: .interval, recordedAt: time, timeSource: .gps)
            _ = try db.inTransaction { try ping.insert(db) }
            pings += 1
            time += interval
            usleep(UInt32(interval * 1e6))
        }
        let after = try IOSample.read(pid: getpid())
        let row = BaselineRow(writeBytes: after.writeBytes - before.writeBytes, pings: pings)
        FileHandle.standardOutput.write(try JSONEncoder().encode(row))
    }
}

/// A process's I/O counters (`/proc/PID/io`).
struct IOSample {
    var writeBytes: Int

    /// Throws when the kernel does not count (no /proc/PID/io): the figure is missing, never read as zero.
    static func read(pid: Int32) throws -> IOSample {
        let text = try String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("write_bytes:") }),
              let value = Int(line.split(separator: " ").last ?? "")
        else { throw ValidationError("/proc/\(pid)/io has no write_bytes") }
        return IOSample(writeBytes: value)
    }
}
