import ArgumentParser
import DispatchSimCore
import DriverAPI
import Foundation
import JSONRPC
import NMEASynth

/// What a unit costs while its storage cannot be written, beside a healthy unit in the same run: three driverd
/// processes parked on one real-time receiver and one dispatch-sim, one with its state directory on a healthy disk,
/// one on a 24 MB tmpfs filled to its last byte, one on ext4 (a loop device, `errors=remount-ro`) after a real
/// file-system error. Each: CPU and wake-ups over the window, the store's condition, and how old the newest ping at
/// the backend gets (the pings need no disk). Root only (mounts).
struct StorageBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storage", abstract: "CPU, wake-ups and pings at the backend with a full and a read-only store, beside a healthy one.")

    @Option(help: "Directory of the release binaries.") var bin: String
    @Option(help: "Seconds measured after the faults.") var seconds = 60

    struct Unit {
        let name: String
        let state: String
        let socket: String
        let driver: String
        var process: Process?
    }

    func run() async throws {
        guard geteuid() == 0 else {
            say("skipped: mounting a tmpfs and a loop device needs root")
            return
        }
        let directory = try makeTemporaryDirectory()
        var mounts: [String] = []
        var loop: String?
        defer {
            for mount in mounts { _ = try? Self.run("/usr/bin/umount", ["-l", mount]) }  // cleanup: a failure leaves a scratch mount only
            if let loop { _ = try? Self.run("/usr/sbin/losetup", ["-d", loop]) }  // likewise
            try? FileManager.default.removeItem(atPath: directory)  // a scratch directory: one left behind harms no figure
        }
        var units = ["healthy", "full", "read-only"].enumerated().map { index, name in
            Unit(name: name, state: directory + "/\(name)/state", socket: directory + "/\(name).sock", driver: "drv-\(index + 1)")
        }
        for unit in units { try FileManager.default.createDirectory(atPath: unit.state, withIntermediateDirectories: true) }
        try Self.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=24m", "tmpfs", units[1].state])
        mounts.append(units[1].state)
        let image = directory + "/card.img"
        try Self.run("/usr/bin/truncate", ["-s", "64M", image])
        try Self.run("/usr/sbin/mkfs.ext4", ["-q", "-F", "-m", "0", image])
        let device = try Self.run("/usr/sbin/losetup", ["--find", "--show", image]).trimmingCharacters(in: .whitespacesAndNewlines)
        loop = device
        try Self.run("/usr/bin/mount", ["-o", "errors=remount-ro", device, units[2].state])
        mounts.append(units[2].state)

        let scenario = Scenario(drivers: (1...3).map { Scenario.Driver(id: "drv-\($0)", username: "rider\($0)", password: "pw-\($0)") }, tasks: [])
        try JSONEncoder().encode(scenario).write(to: URL(fileURLWithPath: directory + "/scenario.json"))
        let sim = try SimServerProcess(bin: bin, arguments: ["--scenario", directory + "/scenario.json"])
        defer { sim.stop() }
        let warmup = 100  // a parked unit is called stationary within about 75 s
        let log = directory + "/parked.nmea"
        try NMEAWriter.log(RoutePresets.parked(seconds: warmup + seconds + 120, noise: 5)).write(toFile: log, atomically: true, encoding: .utf8)
        let receiver = try RealTimeReceiver(log: log, scratch: directory)
        defer { receiver.stop() }
        for index in units.indices {
            let unit = units[index]
            let config = unit.state + "/../driverd.toml"
            try """
                [shift]
                auto_start = true
                [backend]
                url = "\(sim.base)"
                username = "rider\(index + 1)"
                password = "pw-\(index + 1)"
                """.write(toFile: config, atomically: true, encoding: .utf8)
            units[index].process = try spawn(bin + "/driverd", [
                "--config", config, "--socket", unit.socket, "--state-dir", unit.state, "--gpsd", "127.0.0.1:\(receiver.port)",
                "--log-target", "stderr", "--log-level", "warning",
            ], quiet: true, log: directory + "/\(unit.name).log")
        }
        defer {
            for unit in units { unit.process?.terminate() }
            for unit in units { unit.process?.waitUntilExit() }
        }
        for unit in units { try waitForSocket(unit.socket) }
        say("3 driverd processes parked on one receiver (warm-up \(warmup) s), then the faults, then \(seconds) s measured")
        try await Task.sleep(for: .seconds(warmup))

        // The faults: another program fills the tmpfs; the kernel remounts the ext4 read-only after an error.
        Self.fill(units[1].state)
        try "1\n".write(toFile: "/sys/fs/ext4/\((device as NSString).lastPathComponent)/trigger_fs_error", atomically: false, encoding: .utf8)
        try await Task.sleep(for: .seconds(5))

        let pids = units.map { $0.process!.processIdentifier }
        let start = pids.map { ProcessSample.read(pid: $0) }
        var oldest = [Double](repeating: 0, count: units.count)
        let began = Date()
        while Date().timeIntervalSince(began) < Double(seconds) {
            try await Task.sleep(for: .seconds(5))
            let now = Date().timeIntervalSince1970
            for index in units.indices {
                let locations: DriverLocations = try await sim.get("/sim/drivers/\(units[index].driver)/locations")
                let newest = locations.lastReportAt ?? 0
                oldest[index] = max(oldest[index], now - newest)
            }
        }
        let minutes = Date().timeIntervalSince(began) / 60
        let end = pids.map { ProcessSample.read(pid: $0) }
        say("unit        store        CPU % of a core   ratio   wake-ups/min   oldest last report at the backend")
        var baseline: Double?
        for index in units.indices {
            guard let first = start[index], let last = end[index] else {
                say("\(units[index].name): the process ended")
                throw ExitCode.failure
            }
            let status = try RPCClient(socketPath: units[index].socket, timeout: .seconds(10)).call(Methods.agentStatus, NoParams())
            let share = (last.cpuSeconds - first.cpuSeconds) / (minutes * 60) * 100
            if baseline == nil { baseline = share }
            let ratio = (baseline ?? 0) > 0 ? String(format: "%.2f×", share / baseline!) : "-"
            say(units[index].name.padding(toLength: 12, withPad: " ", startingAt: 0)
                + (status.store?.condition.rawValue ?? "?").padding(toLength: 13, withPad: " ", startingAt: 0)
                + String(format: "%-18.3f", share) + ratio.padding(toLength: 8, withPad: " ", startingAt: 0)
                + String(format: "%-15.1f", Double(last.wakeUps - first.wakeUps) / minutes)
                + String(format: "%.0f s", oldest[index]))
            say("            wake-ups/min by thread: " + ProcessSample.threadRates(from: first, to: last, minutes: minutes))
        }
    }

    /// Writes until the file system under `directory` is full to its last byte.
    static func fill(_ directory: String) {
        let fd = open(directory + "/filler", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        for size in [1 << 20, 1 << 12, 1] {
            let chunk = [UInt8](repeating: 0x5A, count: size)
            while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, size) }) == size {}
        }
    }

    @discardableResult
    static func run(_ path: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ValidationError("\(path) \(arguments.joined(separator: " ")) failed") }
        return String(decoding: data, as: UTF8.self)
    }
}
