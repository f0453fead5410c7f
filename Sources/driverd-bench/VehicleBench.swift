import ArgumentParser
import DriverAPI
import Foundation
import JSONRPC
import NMEASynth

/// The vehicle's adapter (ELM327-emulator, `obd_car.py`, on loopback TCP): what it costs the daemon per minute
/// parked and moving beside the same replay without it, and how soon the safety gate follows a change of the
/// vehicle's speed beside how soon it follows the receiver's.
struct VehicleBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "vehicle", abstract: "OBD-II adapter: cost per minute and speed → gate latency.")

    @Option(help: "Directory with the driverd binary.") var bin: String
    @Option(help: "The car: Tests/IntegrationTests/Support/obd_car.py.") var carScript: String
    @Option(help: "Python with ELM327-emulator installed.") var python: String
    @Option(help: "Measured seconds per moving cost scenario (after a warm-up).") var seconds = 60
    @Option(help: "Measured seconds per parked cost scenario: whole 2-minute windows of a standing van's pings, each ending in one sync.")
    var parkedSeconds = 240
    @Option(help: "Stops and starts timed for the latency.") var trials = 8
    @Option(help: "What to run, comma-separated: cost, latency.") var only = "cost,latency"
    @Option(help: "Stationary receiver log (default: a synthesised parked log).") var stationary: String?
    @Option(help: "Moving receiver log (default: a synthesised drive).") var moving: String?
    @Option(help: "Which cost scenarios, comma-separated: parked, moving.") var motion = "parked,moving"
    @Flag(help: "Also print each thread's wake-ups per minute.") var threads = false

    func run() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }  // a scratch directory: one left behind harms no figure
        let chosen = Set(only.split(separator: ",").map(String.init))
        if chosen.contains("cost") { try cost(directory) }
        if chosen.contains("latency") { try latency(directory) }
    }

    // MARK: - Cost per minute

    private struct CostScenario {
        var name: String
        var parked: Bool
        /// The car's state; nil: no adapter.
        var car: [String: Any]?
    }

    private func cost(_ directory: String) throws {
        let parked = stationary ?? directory + "/parked.nmea", moving = self.moving ?? directory + "/moving.nmea"
        if stationary == nil {
            try NMEAWriter.log(RoutePresets.parked(seconds: parkedSeconds + 320)).write(toFile: parked, atomically: true, encoding: .utf8)
        }
        if self.moving == nil {
            try NMEAWriter.log(RoutePresets.driving(laps: seconds / 200 + 2)).write(toFile: moving, atomically: true, encoding: .utf8)
        }
        let scenarios = [
            CostScenario(name: "parked", parked: true, car: nil),
            CostScenario(name: "parked", parked: true, car: ["mode": "off", "voltage": 12.5]),
            CostScenario(name: "parked", parked: true, car: ["rpm": 800, "speed_kmh": 0, "voltage": 14.0, "fuel_pct": 60, "odometer_km": 12000]),
            CostScenario(name: "moving", parked: false, car: nil),
            CostScenario(name: "moving", parked: false, car: ["rpm": 1800, "speed_kmh": 43, "voltage": 14.1, "fuel_pct": 60, "odometer_km": 12000]),
        ]
        say("Cost per minute, real-time replays through gpsd; baseline: the same replay without an adapter, in the same run.")
        say("The parked window starts 200 s in: the motion detector takes up to 65 s to call a vehicle stationary, and the pings")
        say("of that first stretch are synced within their window; after it, a standing van's steady state. Wake-ups: voluntary switches.")
        say(pad("scenario", 10) + pad("adapter", 22) + pad("cpu s/min", 11) + "wakeups/min")
        let motions = Set(motion.split(separator: ",").map(String.init))
        for (index, scenario) in scenarios.enumerated() where motions.contains(scenario.name) {
            let scratch = directory + "/cost-\(index)"
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
            let fake = try RealTimeReceiver(log: scenario.parked ? parked : moving, scratch: scratch)
            defer { fake.stop() }
            var car: Car?
            if let state = scenario.car { car = try Car(python: python, script: carScript, state: state, scratch: scratch) }
            defer { car?.stop() }
            let adapter = car.map { "[vehicle]\nadapter = \"127.0.0.1:\($0.port)\"\n" } ?? ""
            let (daemon, _) = try startDaemon(scratch, config: "[shift]\nauto_start = true\n" + adapter, gpsd: "127.0.0.1:\(fake.port)")
            defer {
                daemon.terminate()
                daemon.waitUntilExit()
            }
            sleep(scenario.parked ? 200 : 15)
            let measured = scenario.parked ? parkedSeconds : seconds
            let start = ProcessSample.read(pid: daemon.processIdentifier)
            sleep(UInt32(measured))
            let end = ProcessSample.read(pid: daemon.processIdentifier)
            guard let start, let end else { continue }
            let minutes = Double(measured) / 60
            let label = scenario.car == nil ? "none (baseline)" : scenario.car?["mode"] as? String == "off" ? "ignition off" : "engine running"
            say(pad(scenario.name, 10) + pad(label, 22)
                + pad(String(format: "%.3f", (end.cpuSeconds - start.cpuSeconds) / minutes), 11)
                + String(format: "%.1f", Double(end.wakeUps - start.wakeUps) / minutes))
            if threads { say("    by thread: " + ProcessSample.threadRates(from: start, to: end, minutes: minutes)) }
        }
    }

    // MARK: - Speed → gate

    private func latency(_ directory: String) throws {
        say("")
        say("Speed change → safety gate (safety.changed at a subscriber), median over \(trials) stops and \(trials) starts;")
        say("baseline: the same with GNSS only (a receiver at 1 Hz through gpsd). Opening includes the gate's 3-s settle time.")
        let vehicle = try vehicleLatency(directory + "/latency-vehicle")
        let gnss = try gnssLatency(directory + "/latency-gnss")
        say(pad("source", 22) + pad("close p50 s", 13) + pad("open p50 s", 12) + "trials")
        for (label, result) in [("vehicle (OBD, 1 Hz)", vehicle), ("GNSS only (baseline)", gnss)] {
            say(pad(label, 22) + pad(String(format: "%.2f", median(result.close)), 13) + pad(String(format: "%.2f", median(result.open)), 12)
                + "\(result.close.count)+\(result.open.count)")
        }
        say("ratio vehicle/GNSS: close \(String(format: "%.2f", median(vehicle.close) / median(gnss.close))), open "
            + String(format: "%.2f", median(vehicle.open) / median(gnss.open)))
    }

    private struct Latencies {
        var close: [Double] = []
        var open: [Double] = []
    }

    /// The vehicle alone (no receiver): driving at 54 km/h, the car's speed set to 0 and back, each change of the
    /// gate timed from the write.
    private func vehicleLatency(_ scratch: String) throws -> Latencies {
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let state: [String: Any] = ["rpm": 1800, "speed_kmh": 54, "voltage": 14.1]
        let car = try Car(python: python, script: carScript, state: state, scratch: scratch)
        defer { car.stop() }
        let (daemon, socket) = try startDaemon(scratch, config: "[vehicle]\nadapter = \"127.0.0.1:\(car.port)\"\n", gpsd: "127.0.0.1:1")
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        let gate = try GateWatcher(socket: socket)
        // Under way (the gate starts closed: the speed unknown, then moving) at the fix rate.
        sleep(5)
        var result = Latencies()
        for _ in 0..<trials {
            // A random phase against the reader's 1-s polls: a change comes at any moment of a poll interval.
            usleep(UInt32.random(in: 0..<1_000_000))
            var start = Date().timeIntervalSince1970
            try car.set(["rpm": 800, "speed_kmh": 0, "voltage": 14.0])
            guard let opened = gate.wait(open: true, after: start, timeout: 30) else { throw ValidationError("the gate did not open") }
            result.open.append(opened - start)
            sleep(2)
            usleep(UInt32.random(in: 0..<1_000_000))
            start = Date().timeIntervalSince1970
            try car.set(["rpm": 1800, "speed_kmh": 54, "voltage": 14.1])
            guard let closed = gate.wait(open: false, after: start, timeout: 30) else { throw ValidationError("the gate did not close") }
            result.close.append(closed - start)
            sleep(2)
        }
        return result
    }

    /// GNSS only: a receiver that drives 15 s and stands 15 s, over and over; each change timed from the moment it
    /// happens in the receiver's own time (the log says when each drive and stand begins), brought to the unit's clock
    /// by the quickest delivery of any fix, to the gate's change: the sampling rate's delay included, as the
    /// vehicle's poll interval is.
    private func gnssLatency(_ scratch: String) throws -> Latencies {
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let start = SyntheticRoute.Point(lat: 52.52, lon: 13.405)
        let firstStand = 20.0, leg = 15.0
        var legs: [SyntheticRoute.Leg] = [.stop(seconds: Int(firstStand))]
        for lap in 0..<(trials + 1) {
            let north = start.lat + Double(lap + 1) * 12 * leg / 111_320
            legs += [.drive(to: .init(lat: north, lon: start.lon), speed: 12), .stop(seconds: Int(leg))]
        }
        let startTime = Date().timeIntervalSince1970.rounded()
        let log = scratch + "/cycles.nmea"
        try NMEAWriter.log(SyntheticRoute(start: start, startTime: startTime, legs: legs, noise: 0.5, seed: 9))
            .write(toFile: log, atomically: true, encoding: .utf8)
        let fake = try RealTimeReceiver(log: log, scratch: scratch)
        defer { fake.stop() }
        let (daemon, socket) = try startDaemon(scratch, config: "[shift]\nauto_start = true\n", gpsd: "127.0.0.1:\(fake.port)")
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        let gate = try GateWatcher(socket: socket)
        let end = startTime + firstStand + Double(trials + 1) * 2 * leg + 5
        while Date().timeIntervalSince1970 < end + gate.offset { usleep(500_000) }
        var result = Latencies()
        for lap in 0..<trials {
            let drives = startTime + firstStand + Double(lap) * 2 * leg + gate.offset
            let stands = drives + leg
            guard let closed = gate.first(open: false, after: drives), let opened = gate.first(open: true, after: stands) else {
                throw ValidationError("the replay's cycle \(lap + 1) did not move the gate")
            }
            result.close.append(closed - drives)
            result.open.append(opened - stands)
        }
        return result
    }

    /// driverd with `config` in `scratch`, once its socket answers.
    private func startDaemon(_ scratch: String, config: String, gpsd: String) throws -> (Process, socket: String) {
        let socket = scratch + "/driverd.sock"
        try config.write(toFile: scratch + "/driverd.toml", atomically: true, encoding: .utf8)
        let daemon = try spawn(bin + "/driverd", [
            "--socket", socket, "--state-dir", scratch + "/state", "--config", scratch + "/driverd.toml", "--gpsd", gpsd,
            "--log-level", "warning", "--log-target", "stderr",
        ], quiet: true)
        try waitForSocket(socket)
        return (daemon, socket)
    }

    private func median(_ values: [Double]) -> Double { percentile(values.sorted(), 50) }

    private func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(1, width - text.count)) }
}

/// The car behind its adapter: obd_car.py on a random loopback port, its state in a file.
private struct Car {
    let port = Int.random(in: 40000...49000)
    let statePath: String
    let process: Process
    let logPath: String

    init(python: String, script: String, state: [String: Any], scratch: String) throws {
        statePath = scratch + "/car.json"
        logPath = scratch + "/elm-batch-\(port).out"
        try JSONSerialization.data(withJSONObject: state).write(to: URL(fileURLWithPath: statePath), options: .atomic)
        process = try spawn(python, [script, "--state", statePath, "--port", String(port)], quiet: true)
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline, !FileManager.default.fileExists(atPath: logPath) { usleep(100_000) }
        usleep(500_000)
    }

    func set(_ state: [String: Any]) throws {
        try JSONSerialization.data(withJSONObject: state).write(to: URL(fileURLWithPath: statePath), options: .atomic)
    }

    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// A subscriber to `safety.changed` and `gps.fix`, on a thread of its own: each notification stamped (Unix seconds)
/// as it arrives; the quickest fix delivery gives the offset from the receiver's time to the unit's clock.
private final class GateWatcher: @unchecked Sendable {
    private let condition = NSCondition()
    private var gates: [(at: Double, open: Bool)] = []
    private var quickest: Double?

    init(socket: String) throws {
        let client = try RPCClient(socketPath: socket, timeout: nil)
        _ = try client.call(Methods.eventsSubscribe, SubscribeParams(topics: [Events.safetyChanged.topic, Events.gpsFix.topic]))
        nonisolated(unsafe) let reader = client
        Thread { [weak self] in
            while let message = try? reader.readReply() {  // until the connection ends, as the run expects
                let now = Date().timeIntervalSince1970
                guard let self, case .string(let method)? = message["method"], case .object(let params)? = message["params"] else { continue }
                self.condition.lock()
                if method == Events.safetyChanged.topic, case .bool(let open)? = params["open"] { self.gates.append((now, open)) }
                if method == Events.gpsFix.topic, case .number(let text)? = params["time"], let time = Double(text) {
                    self.quickest = min(self.quickest ?? .infinity, now - time)
                }
                self.condition.broadcast()
                self.condition.unlock()
            }
        }.start()
    }

    /// Seconds from the receiver's time to the unit's clock (0 before any fix).
    var offset: Double {
        condition.lock()
        defer { condition.unlock() }
        return quickest ?? 0
    }

    func first(open: Bool, after: Double) -> Double? {
        condition.lock()
        defer { condition.unlock() }
        return gates.first { $0.at >= after && $0.open == open }?.at
    }

    func wait(open: Bool, after: Double, timeout: Double) -> Double? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let found = gates.first(where: { $0.at >= after && $0.open == open })?.at { return found }
            guard condition.wait(until: deadline) else { return nil }
        }
    }
}
