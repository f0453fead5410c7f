import ArgumentParser
import AsyncHTTPClient
import DispatchSimCore
import Foundation
import NIOCore
import NMEASynth
import Synchronization

/// What a unit costs its cellular radio: every packet between driverd and its backend captured (tcpdump on
/// loopback), grouped into bursts by the LTE radio's tail (Huang et al., MobiSys 2012: the radio stays in its
/// high-power state 11.576 s after the last packet either way), and the seconds an hour the radio is awake by that
/// model; beside it driverd's wake-ups a minute (voluntary context switches, all threads). Four situations, each
/// with this release's settings beside release 0.1.0's in the same run: the backend pinging every WebSocket every
/// 30 s (hummingbird's default, which dispatch-sim had) and a parked van's batches every 10 s whatever its ignition.
struct RadioBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "radio", abstract: "Radio bursts and awake seconds an hour, and wake-ups, parked and moving.")

    @Option(help: "Directory with the driverd, dispatch-sim and driverd-bench binaries.") var bin: String
    @Option(help: "Measured seconds per situation (after its warm-up).") var seconds = 300
    @Option(help: "Measured seconds overnight: at least two keepalives (600 s each by default), or the window shows none.")
    var overnightSeconds = 1260
    @Option(help: "Directory with the driverd and dispatch-sim of the release to compare with (without it: these binaries with release 0.1.0's radio settings).")
    var baselineBin: String?
    @Option(help: "Measure only the situations whose name contains this.") var only: String?
    @Option(help: "Keep each run's directory (driverd's log and the capture, capture.txt) here.") var keep: String?

    /// The radio's high-power tail after the last packet, seconds.
    static let tail = 11.576

    struct Situation {
        var name: String
        var moving: Bool
        var ignition: Bool
        var onShift: Bool
        /// The measured window, seconds.
        var seconds: Int
    }

    struct Settings {
        var name: String
        /// Where its driverd and dispatch-sim are.
        var bin: String
        var simArguments: [String]
        var uplink: String
    }

    struct Row {
        var packets: Int
        var bytes: Int
        var bursts: Int
        var awakeSeconds: Double
        var wakeUps: Int
        /// Wake-ups a minute by thread, busiest first.
        var threads: String
        /// Health reports the backend took in the window and their bodies' bytes as sent (nil: that dispatch-sim does
        /// not count them, an earlier release's).
        var healthReports: (count: Int, bytes: Int)?
    }

    func run() throws {
        let everySituation = [
            Situation(name: "moving", moving: true, ignition: true, onShift: true, seconds: seconds),
            Situation(name: "parked, ignition on", moving: false, ignition: true, onShift: true, seconds: seconds),
            Situation(name: "parked, ignition off", moving: false, ignition: false, onShift: true, seconds: seconds),
            Situation(name: "overnight (off shift, ignition off)", moving: false, ignition: false, onShift: false, seconds: overnightSeconds),
        ]
        let settings = [
            Settings(name: "this release", bin: bin, simArguments: [], uplink: ""),
            baselineBin.map { Settings(name: "baseline", bin: $0, simArguments: [], uplink: "") }
                // Release 0.1.0's radio: the backend's 30-s WebSocket ping, parked batches at the stationary interval, no
                // keepalive of the unit's own (its other timers are this release's).
                ?? Settings(name: "0.1.0 settings", bin: bin, simArguments: ["--ws-ping-seconds", "30"], uplink: "saver_batch_seconds = 10\nkeepalive_seconds = 7200\n"),
        ]
        let situations = everySituation.filter { only.map($0.name.contains) ?? true }
        let directory = try keep ?? makeTemporaryDirectory()
        // Expected answer: a scratch directory that cannot be removed harms no figure (it stays in /tmp).
        defer { if keep == nil { try? FileManager.default.removeItem(atPath: directory) } }
        say("Radio: every packet between driverd and dispatch-sim (tcpdump on loopback) over \(seconds) s after a warm-up (overnight \(overnightSeconds) s), real time;")
        say("a burst ends \(Self.tail) s after its last packet (the LTE tail); awake s/h = the radio's high-power seconds an hour.")
        say("Goals: parked with the ignition off ≤ 600 awake s/h; overnight ≤ 120 awake s/h and ≤ 2 wake-ups a minute; moving: batches every 5 to 10 s.")
        let runs = situations.indices.flatMap { s in settings.indices.map { (s, $0) } }
        let rows = Mutex<[Int: Row]>([:])
        let failures = Mutex<[String]>([])
        let threads = runs.enumerated().map { index, run in
            Thread {
                do {
                    let row = try measure(situations[run.0], settings[run.1], scratch: directory + "/\(index)")
                    rows.withLock { $0[index] = row }
                } catch {
                    failures.withLock { $0.append("\(situations[run.0].name), \(settings[run.1].name): \(error)") }
                }
            }
        }
        for thread in threads { thread.start() }
        for thread in threads { while !thread.isFinished { usleep(100_000) } }
        say(pad("situation", 38) + pad("settings", 16) + pad("packets/h", 11) + pad("kB/h", 9) + pad("bursts/h", 10) + pad("awake s/h", 11) + pad("ratio", 8) + "wake-ups/min")
        let measured = rows.withLock { $0 }
        for (s, situation) in situations.enumerated() {
            let hour = 3600 / Double(situation.seconds), minutes = Double(situation.seconds) / 60
            let base = runs.firstIndex(where: { $0 == (s, 1) }).flatMap { measured[$0] }
            for (k, setting) in settings.enumerated() {
                guard let index = runs.firstIndex(where: { $0 == (s, k) }), let row = measured[index] else {
                    say(pad(situation.name, 38) + pad(setting.name, 16) + "failed")
                    continue
                }
                let ratio = base.map { $0.awakeSeconds > 0 ? String(format: "%.2f×", row.awakeSeconds / $0.awakeSeconds) : "-" } ?? "-"
                say(pad(k == 0 ? situation.name : "", 38) + pad(setting.name, 16) + pad(String(format: "%.0f", Double(row.packets) * hour), 11)
                    + pad(String(format: "%.1f", Double(row.bytes) * hour / 1000), 9) + pad(String(format: "%.0f", Double(row.bursts) * hour), 10)
                    + pad(String(format: "%.0f", row.awakeSeconds * hour), 11) + pad(ratio, 8) + String(format: "%.1f", Double(row.wakeUps) / minutes))
                say(pad("", 38) + "  wake-ups/min by thread: " + row.threads)
                if let health = row.healthReports {
                    say(pad("", 38) + "  health reports: \(health.count) in the window (\(String(format: "%.0f", Double(health.count) * hour))/h), "
                        + "bodies \(health.bytes) bytes (\(String(format: "%.0f", Double(health.bytes) * hour)) bytes/h)")
                }
            }
        }
        for failure in failures.withLock({ $0 }) { say("failed: \(failure)") }
        if !failures.withLock({ $0.isEmpty }) { throw ExitCode.failure }
    }

    private func measure(_ situation: Situation, _ settings: Settings, scratch: String) throws -> Row {
        try FileManager.default.createDirectory(atPath: scratch + "/state", withIntermediateDirectories: true)
        let warmup = situation.moving ? 30 : 100  // a parked unit is called stationary within about 75 s
        let seconds = situation.seconds
        let total = warmup + seconds + 60
        let route = situation.moving ? RoutePresets.driving(laps: total / 160 + 1) : RoutePresets.parked(seconds: total, noise: 5)
        let log = scratch + "/route.nmea"
        try NMEAWriter.log(route).write(toFile: log, atomically: true, encoding: .utf8)
        // Kept runs say what each request was (dispatch-sim's log on this command's standard error).
        let sim = try SimServerProcess(bin: settings.bin, arguments: settings.simArguments + (keep != nil ? ["--log-level", "info"] : []))
        defer { sim.stop() }
        guard let simPort = URL(string: sim.base)?.port else { throw ValidationError("dispatch-sim's address \(sim.base) has no port") }
        let fake = try RealTimeReceiver(log: log, scratch: scratch)
        defer { fake.stop() }
        try (situation.ignition ? "1\n" : "0\n").write(toFile: scratch + "/ignition", atomically: true, encoding: .utf8)
        try """
            [shift]
            auto_start = \(situation.onShift)
            [ignition]
            path = "\(scratch)/ignition"
            [backend]
            url = "\(sim.base)"
            username = "rider1"
            password = "demo-password"
            [uplink]
            \(settings.uplink)
            """.write(toFile: scratch + "/driverd.toml", atomically: true, encoding: .utf8)
        let started = Date()
        let socket = scratch + "/driverd.sock"
        let daemon = try spawn(settings.bin + "/driverd", [
            "--socket", socket, "--state-dir", scratch + "/state", "--config", scratch + "/driverd.toml",
            "--gpsd", "127.0.0.1:\(fake.port)", "--log-level", "warning", "--log-target", "stderr",
        ], quiet: true, log: scratch + "/driverd.log")
        defer {
            if daemon.isRunning {
                daemon.terminate()
                daemon.waitUntilExit()
            }
        }
        try waitForSocket(socket)
        let untilWindow = Double(warmup) - Date().timeIntervalSince(started)
        if untilWindow > 0 { usleep(UInt32(untilWindow * 1e6)) }
        // -q: one line a packet ("<time> IP a.port > b.port: tcp <length>"), -l: each line as it comes.
        let output = Pipe()
        let capture = Process()
        capture.executableURL = URL(fileURLWithPath: "/usr/bin/tcpdump")
        capture.arguments = ["-i", "lo", "-n", "-tt", "-q", "-l", "--immediate-mode", "tcp port \(simPort)"]
        capture.standardOutput = output
        capture.standardError = FileHandle.nullDevice
        try capture.run()
        guard let before = ProcessSample.read(pid: daemon.processIdentifier) else { throw ValidationError("driverd ended before the window") }
        let windowStart = Date().timeIntervalSince1970
        sleep(UInt32(seconds))
        guard let after = ProcessSample.read(pid: daemon.processIdentifier) else { throw ValidationError("driverd ended in the window") }
        // SIGKILL: tcpdump started here runs with SIGINT and SIGTERM blocked (its /proc status says so); with
        // --immediate-mode and -l every packet's line is already written.
        kill(capture.processIdentifier, SIGKILL)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        capture.waitUntilExit()
        if keep != nil { try text.write(toFile: scratch + "/capture.txt", atomically: true, encoding: .utf8) }
        var times: [Double] = []
        var bytes = 0
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let time = fields.first.flatMap({ Double($0) }), time >= windowStart, time < windowStart + Double(seconds) else { continue }
            times.append(time)
            // Each packet's TCP payload and its 40 bytes of IP and TCP headers.
            bytes += (fields.last.flatMap { Int($0) } ?? 0) + 40
        }
        let radio = Self.radio(times.sorted(), until: windowStart + Double(seconds))
        let receipts = try Self.healthReceipts(sim.base)?.filter { $0.time >= windowStart && $0.time < windowStart + Double(seconds) }
        return Row(
            packets: times.count, bytes: bytes, bursts: radio.bursts, awakeSeconds: radio.awake, wakeUps: after.wakeUps - before.wakeUps,
            threads: ProcessSample.threadRates(from: before, to: after, minutes: Double(seconds) / 60),
            healthReports: receipts.map { ($0.count, $0.reduce(0) { $0 + $1.bytes }) })
    }

    /// The health reports dispatch-sim took (`/sim/stats`); nil when it does not count them.
    static func healthReceipts(_ base: String) throws -> [SimStats.HealthReceipt]? {
        struct Counted: Decodable { var healthReports: [SimStats.HealthReceipt]? }
        // The client's own blocking call: this runs on one of the bench's threads, not in a task.
        let response = try HTTPClient.shared.execute(request: try HTTPClient.Request(url: base + "/sim/stats"), deadline: .now() + .seconds(10)).wait()
        return try JSONDecoder().decode(Counted.self, from: Data((response.body ?? ByteBuffer()).readableBytesView)).healthReports
    }

    /// Bursts and the radio's awake seconds for packet times in order: each packet keeps the radio up until `tail`
    /// after it, so a packet within the tail of the one before extends its burst; nothing counts past `until`.
    static func radio(_ times: [Double], until end: Double) -> (bursts: Int, awake: Double) {
        var bursts = 0, awake = 0.0
        for (index, time) in times.enumerated() {
            let gap = index == 0 ? Double.infinity : time - times[index - 1]
            if gap > tail { bursts += 1 }
            let next = index + 1 < times.count ? times[index + 1] : end
            awake += max(0, min(next - time, tail))
        }
        return (bursts, awake)
    }

    private func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(1, width - text.count)) }
}
