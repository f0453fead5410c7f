import BackendContract
import DispatchSimCore
import DriverAPI
import Foundation
import JSONRPC
import NMEASynth
import Testing

/// The vehicle through its OBD-II adapter: ELM327-emulator on loopback TCP beside gpsd fed by gpsfake, the real
/// daemon, driverctl and the reference backend.
@Suite("The vehicle (OBD-II)", .ownThread)
struct VehicleTests {
    static func vehicle(_ daemon: DaemonProcess) throws -> VehicleStatus { try daemon.client().call(Methods.vehicleStatus, NoParams()) }

    static func safety(_ daemon: DaemonProcess) throws -> SafetyStatus {
        try #require(try daemon.client().call(Methods.agentStatus, NoParams()).safety)
    }

    static func waitFor(_ daemon: DaemonProcess, _ what: String, timeout: Duration = .seconds(60), _ condition: (VehicleStatus) -> Bool) throws {
        var last: VehicleStatus?
        try waitUntil(what, timeout: timeout, detail: "\(last.map { "\($0)" } ?? "no status")\n\(daemon.log)") {
            last = try vehicle(daemon)
            return condition(last!)
        }
    }

    static func vehicleEvents(_ http: SimHTTP) async throws -> [VehicleEventReport] {
        try await http.request(.GET, "/sim/activity").decode(ActivityList.self).vehicleEvents.map(\.report)
    }

    static let config = """
        [vehicle]
        parked_poll_seconds = 5
        fault_check_seconds = 5
        low_voltage_seconds = 5
        """

    @Test("a drive: the engine is the ignition, a fault code goes to the backend once, a tunnel without GNSS keeps the gate closed until the vehicle stops, ignition off leaves the voltage, a sinking voltage protects the battery once", .tags(.longest))
    func drive() async throws {
        let directory = TemporaryDirectory()
        let car = try OBDCar(["rpm": 1800, "speed_kmh": 43, "voltage": 14.1, "fuel_pct": 70, "odometer_km": 12345.6, "run_s": 300])
        let route = RoutePresets.driving(laps: 20, speed: 12)
        let log = directory.file("drive.nmea")
        try NMEAWriter.log(route).write(toFile: log, atomically: true, encoding: .utf8)
        let gnss = try GPSFake(log: log, delay: 0.1, loop: true)
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let daemon = try DaemonProcess(
            arguments: ["--gpsd", gnss.endpoint], config: Harness.config(backend: sim) + "\n" + Self.config + "\nadapter = \"\(car.address)\"\n",
            directory: directory)
        let follower = try BackgroundProgram(
            Binaries.path("driverctl"), ["--socket", daemon.socketPath, "vehicle", "--follow"], directory: directory, name: "follow.txt")

        // The engine runs: the ignition comes from the vehicle.
        // The first pass reads everything, the fault codes last.
        try Self.waitFor(daemon, "the engine running through the adapter") {
            $0.link == .ok && $0.engineRunning == true && $0.ignition == true && $0.checkEngine != nil && $0.odometerKm != nil
        }
        let running = try Self.vehicle(daemon)
        #expect(running.ignitionSource == .obd && running.odometerKm == 12345.6 && running.fuelPercent.map { abs($0 - 70) < 1 } == true, "\(running)")
        #expect(running.checkEngine == false && running.faults.isEmpty)
        // The voltage rides along with the other PIDs (PID 42) while the engine unit answers: no ATRV of its own.
        #expect(running.voltage == 14.1, "\(running)")
        let asked = car.requests
        #expect(asked.contains("010D0C2FA61F42") && !asked.contains("ATRV"), "\(asked)")
        // An order accepted now: its distance by the vehicle's odometer, beside the GNSS odometer's.
        try waitUntil("the route synced", timeout: .seconds(60), detail: daemon.log) {
            try daemon.client().call(Methods.routeGet, NoParams()).stops.count == 4
        }
        _ = try daemon.client().call(Methods.taskAccept, TaskParams(taskId: "task-1001"))

        // A misfire: shown with its description, reported to the backend once however often it is read.
        try car.set(["rpm": 1800, "speed_kmh": 43, "voltage": 14.1, "fuel_pct": 70, "odometer_km": 12345.6, "stored": ["P0301"]])
        try Self.waitFor(daemon, "the misfire read") { $0.checkEngine == true && $0.faults.map(\.code) == ["P0301"] }
        try await waitUntil("the fault reached the backend", timeout: .seconds(60), detail: daemon.log) {
            try await Self.vehicleEvents(http).contains { $0.kind == .faultAppeared && $0.code == "P0301" }
        }
        let shown = try runProgram(Binaries.path("driverctl"), ["--socket", daemon.socketPath, "vehicle"])
        #expect(shown.stdout.contains("P0301  Cylinder 1 misfire detected") && shown.stdout.contains("check engine: ON"), "\(shown.stdout)")
        // A mechanic clears it: the backend hears that once too.
        try car.set(["rpm": 1800, "speed_kmh": 43, "voltage": 14.1, "fuel_pct": 70, "odometer_km": 12345.6])
        try await waitUntil("the clearing reached the backend", timeout: .seconds(60), detail: daemon.log) {
            try await Self.vehicleEvents(http).contains { $0.kind == .faultCleared && $0.code == "P0301" }
        }

        // The tunnel: GNSS gone, the vehicle at 15 m/s; the gate stays closed on the vehicle's speed alone.
        try waitUntil("driving", timeout: .seconds(60), detail: daemon.log) { try Self.safety(daemon).state == .moving }
        gnss.kill()
        try car.set(["rpm": 2000, "speed_kmh": 54, "voltage": 14.1, "fuel_pct": 69, "odometer_km": 12346.0])
        // Longer than any fix could speak for the vehicle (10 s): the speed is the adapter's.
        try await Task.sleep(for: .seconds(15))
        let inTunnel = try Self.safety(daemon)
        #expect(inTunnel.state == .moving && inTunnel.open == false, "\(inTunnel)")
        #expect(try daemon.client().call(Methods.gpsStatus, NoParams()).link != .connected)
        let task = try daemon.client().call(Methods.routeGet, NoParams()).tasks.first { $0.id == "task-1001" }
        #expect(task?.vehicleDistanceMeters == 400 && task?.distanceMeters != nil, "\(String(describing: task))")
        // A stop in the tunnel: the gate opens after its settle time.
        try car.set(["rpm": 800, "speed_kmh": 0, "voltage": 14.1, "fuel_pct": 69, "odometer_km": 12346.0])
        try waitUntil("the gate opened in the tunnel", timeout: .seconds(30), detail: daemon.log) { try Self.safety(daemon).open == true }

        // Ignition off: no engine unit answers; the adapter's voltage still does.
        try car.set(["mode": "off", "voltage": 12.4])
        try Self.waitFor(daemon, "ignition off") { $0.link == .noVehicle && $0.engineRunning == false && $0.ignition == false && $0.voltage == 12.4 }

        // The battery sinks below 11.8 V for longer than low_voltage_seconds: protected, reported once.
        try car.set(["mode": "off", "voltage": 11.5])
        try Self.waitFor(daemon, "the battery protected") { $0.batteryProtectionSince != nil }
        try await waitUntil("the battery report reached the backend", timeout: .seconds(60), detail: daemon.log) {
            try await Self.vehicleEvents(http).contains { $0.kind == .batteryLow }
        }
        #expect(daemon.log.contains("vehicle battery low"))
        // Resting between reads (ATLP), the adapter is woken as the chip needs: a reset it loses, then its settings,
        // then the read. Charged again: released at the next protected read (every 5 × 5 s here), not minutes later.
        try await Task.sleep(for: .seconds(30))
        try car.set(["mode": "off", "voltage": 12.6])
        let charged = ContinuousClock.now
        try Self.waitFor(daemon, "protection released", timeout: .seconds(420)) { $0.batteryProtectionSince == nil }
        #expect(ContinuousClock.now - charged < .seconds(60), "protection ended \(ContinuousClock.now - charged) after the charge")
        let lost = car.lostWakingUp
        #expect(!lost.isEmpty && lost.allSatisfy { $0 == "ATZ" }, "commands lost to the sleeping adapter: \(lost)")

        // The trip ended with the ignition (its end waits for the trip rules' time with the ignition off): its report carries the vehicle's odometer, fuel and engine run time.
        try await waitUntil("the trip reached the backend", timeout: .seconds(240), detail: daemon.log) {
            try await !http.request(.GET, "/sim/activity").decode(ActivityList.self).trips.isEmpty
        }
        let trip = try #require(try await http.request(.GET, "/sim/activity").decode(ActivityList.self).trips.first?.report)
        #expect(trip.vehicle?.odometerStartKm == 12345.6 && trip.vehicle?.odometerEndKm == 12346.0 && trip.vehicle?.distanceMeters == 400, "\(trip)")
        #expect(trip.vehicle?.fuelStartPercent.map { abs($0 - 70) < 1 } == true && trip.vehicle?.fuelEndPercent.map { abs($0 - 69) < 1 } == true)
        let listed = try daemon.client().call(Methods.tripsList, NoParams()).trips.first
        #expect(listed?.vehicleDistanceMeters == 400, "\(String(describing: listed))")

        let events = try await Self.vehicleEvents(http)
        #expect(events.filter { $0.kind == .faultAppeared && $0.code == "P0301" }.count == 1, "\(events)")
        #expect(events.filter { $0.kind == .faultCleared && $0.code == "P0301" }.count == 1, "\(events)")
        #expect(events.first { $0.code == "P0301" }?.description == "Cylinder 1 misfire detected")
        #expect(events.filter { $0.kind == .batteryLow }.count == 1, "\(events)")
        let diag = try runProgram(Binaries.path("driverctl"), ["--socket", daemon.socketPath, "diag"])
        #expect(diag.stdout.contains("vehicle") && diag.stdout.contains("odometer disagreements 0"), "\(diag.stdout)")
        // The follower ends with the daemon's connection (it inherits the test's blocked signals: no SIGTERM).
        _ = try daemon.stop()
        let followed = follower.finish(within: .seconds(10))
        #expect(followed.contains("CHECK ENGINE") && followed.contains("BATTERY LOW") && followed.contains("link noVehicle"), "\(followed)")
    }

    @Test("a USB or Bluetooth adapter: a serial line (a pseudo-terminal) in raw mode at the configured baud rate")
    func serialAdapter() throws {
        let car = try OBDCar(["rpm": 900, "speed_kmh": 0, "voltage": 13.9, "fuel_pct": 55, "odometer_km": 2000.5], pty: true)
        let daemon = try Harness.daemon(
            gpsd: "127.0.0.1:1", config: Harness.continuous + Self.config + "\nadapter = \"\(car.address)\"\nbaud_rate = 115200\n")
        try Self.waitFor(daemon, "the serial adapter read") { $0.link == .ok && $0.odometerKm == 2000.5 && $0.engineRunning == true }
        #expect(try Self.vehicle(daemon).adapter?.hasPrefix("/dev/pts/") == true)
        car.unplug()
        try Self.waitFor(daemon, "the serial adapter gone") { $0.link == .absent }
        #expect(try daemon.stop() == 0)
    }

    @Test("a bad adapter never stops the daemon: absent, unplugged and back, a car without an odometer, NO DATA for every PID, garbage, a silent adapter")
    func badAdapters() async throws {
        let car = try OBDCar(["rpm": 800, "speed_kmh": 0, "voltage": 13.8, "fuel_pct": 40], noOdometer: true, start: false)
        let daemon = try Harness.daemon(gpsd: "127.0.0.1:1", config: Harness.continuous + Self.config + "\nadapter = \"\(car.address)\"\n")

        // Nothing on the port: absent with the reason; the daemon answers meanwhile.
        try Self.waitFor(daemon, "absent") { $0.link == .absent && $0.detail?.contains("cannot connect") == true }
        #expect(try daemon.client().call(Methods.agentStatus, NoParams()).gps.link != .connected)

        // Plugged in: a car without PID A6 has no odometer, and says so.
        try car.plugIn()
        try Self.waitFor(daemon, "ok") { $0.link == .ok && $0.engineRunning == true }
        let noOdometer = try Self.vehicle(daemon)
        #expect(noOdometer.odometerKm == nil && !noOdometer.supportedPIDs.contains("A6") && noOdometer.supportedPIDs.contains("0D"), "\(noOdometer)")
        let shown = try runProgram(Binaries.path("driverctl"), ["--socket", daemon.socketPath, "vehicle"])
        #expect(shown.stdout.contains("odometer:     not reported"), "\(shown.stdout)")

        // NO DATA for every PID it claims: no vehicle answers, the live values are unknown, nothing is invented; the
        // engine from the voltage.
        try car.set(["mode": "nodata", "voltage": 13.8])
        try Self.waitFor(daemon, "no data") { $0.link == .noVehicle && $0.detail == "NO DATA" && $0.speed == nil && $0.rpm == nil }
        #expect(try Self.vehicle(daemon).engineRunning == true)

        // Pulled out, plugged back in.
        car.unplug()
        try Self.waitFor(daemon, "unplugged") { $0.link == .absent }
        try car.set(["rpm": 800, "speed_kmh": 0, "voltage": 13.8, "fuel_pct": 40])
        try car.plugIn()
        try Self.waitFor(daemon, "back") { $0.link == .ok && $0.rpm == 800 }

        // Noise instead of answers: the reader gives up on the link and tries again; never a value from noise.
        try car.set(["mode": "garbage", "voltage": 13.8])
        try Self.waitFor(daemon, "garbage noticed") { $0.link == .absent && $0.detail?.contains("garbage") == true }
        #expect(try Self.vehicle(daemon).speed == nil)

        // An adapter that accepts and never answers.
        car.unplug()
        let silent = try OBDCar([:], port: car.port, silent: true)
        try Self.waitFor(daemon, "silent adapter", timeout: .seconds(120)) { $0.link == .absent && $0.detail?.contains("did not answer") == true }
        #expect(try daemon.client().call(Methods.agentStatus, NoParams()).uptimeSeconds >= 0)
        silent.unplug()
        #expect(try daemon.stop() == 0)
    }
}
