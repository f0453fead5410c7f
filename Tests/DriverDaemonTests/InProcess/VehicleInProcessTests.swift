import DispatchSimCore
import DriverAPI
@testable import DriverDaemon
import DriverDomain
import Foundation
import GPSKit
import OBDKit
import Testing

/// The vehicle's speed as evidence, in-process on virtual time: fixes and the adapter's readings handed to the
/// daemon as its readers would hand them over, one a second.
@Suite("The vehicle in-process", .serialized)
struct VehicleInProcessTests {
    final class Drive: @unchecked Sendable {
        let daemon: InProcessDaemon
        var time = Date().timeIntervalSince1970.rounded()
        var north = 0.0
        init(_ daemon: InProcessDaemon) { self.daemon = daemon }

        /// One second: a fix at `speed` when the sky is there, the vehicle's speed when an adapter is.
        func second(speed: Double, gnss: Bool, vehicle: Bool) async {
            time += 1
            north += speed
            daemon.advance(by: 1)
            if gnss {
                _ = await daemon.assembly.pipeline.handIn(.fix(Fix(
                    time: time, latitude: 49.0 + north / 111_320, longitude: 12.1, speed: speed, track: 0, horizontalError: 5, mode: 3)))
            }
            if vehicle {
                daemon.assembly.vehicle.handle(.reading(.speed(speed)))
                daemon.assembly.vehicle.handle(.reading(.rpm(speed > 0 ? 1800 : 800)))
            }
            // The vehicle's events are decided on the GPS thread, at this second of virtual time.
            await daemon.assembly.pipeline.settle()
        }

        func safety() async throws -> SafetyStatus { try #require(try await daemon.call(Methods.agentStatus).safety) }
    }

    @Test("a 2-minute tunnel at 15 m/s: the vehicle's speed keeps the gate closed and the motion moving; a stop in the tunnel opens the gate after the settle time")
    func tunnel() async throws {
        let daemon = try InProcessDaemon(backend: nil) { $0.vehicleAdapter = "192.168.0.10:35000" }
        try await daemon.running {
            let drive = Drive(daemon)
            daemon.assembly.vehicle.handle(.link(.ok, detail: nil))
            for _ in 0..<20 { await drive.second(speed: 15, gnss: true, vehicle: true) }
            #expect(try await drive.safety().state == .moving)
            for _ in 0..<120 { await drive.second(speed: 15, gnss: false, vehicle: true) }
            let gps = try await daemon.call(Methods.gpsStatus)
            #expect(gps.lastFixAge ?? 0 >= 119, "GNSS has been gone for two minutes")
            let inTunnel = try await drive.safety()
            #expect(inTunnel.state == .moving && inTunnel.open == false, "\(inTunnel)")
            #expect(gps.motion == .moving)
            let vehicle = try await daemon.call(Methods.vehicleStatus)
            #expect(vehicle.engineRunning == true && vehicle.ignition == true && vehicle.ignitionSource == .obd && vehicle.speed == 15, "\(vehicle)")
            // The stop: still closed while it settles, open after the settle time (3 s).
            await drive.second(speed: 0, gnss: false, vehicle: true)
            await drive.second(speed: 0, gnss: false, vehicle: true)
            #expect(try await drive.safety().open == false)
            await drive.second(speed: 0, gnss: false, vehicle: true)
            await drive.second(speed: 0, gnss: false, vehicle: true)
            let stopped = try await drive.safety()
            #expect(stopped.state == .stationary && stopped.open == true, "\(stopped)")
        }
    }

    @Test("GNSS only, no adapter: as before, the speed is unknown once the fixes stop and the gate stays closed")
    func gnssOnly() async throws {
        let daemon = try InProcessDaemon(backend: nil)
        try await daemon.running {
            let drive = Drive(daemon)
            for _ in 0..<20 { await drive.second(speed: 15, gnss: true, vehicle: false) }
            for _ in 0..<120 { await drive.second(speed: 15, gnss: false, vehicle: false) }
            let safety = try await drive.safety()
            #expect(safety.state == .unknown && safety.open == false, "\(safety)")
            let vehicle = try await daemon.call(Methods.vehicleStatus)
            #expect(vehicle.adapter == nil && vehicle.link == .absent && vehicle.ignitionSource == .gps)
        }
    }

    @Test("off shift a fault code is shown but not sent; the next shift sends it, once")
    func faultsWaitForTheShift() async throws {
        let backend = StandInBackend()
        let daemon = try InProcessDaemon(backend: backend) {
            $0.vehicleAdapter = "192.168.0.10:35000"
            $0.shiftAutoStart = false
        }
        try await daemon.running {
            let vehicle = daemon.assembly.vehicle
            vehicle.handle(.link(.ok, detail: nil))
            vehicle.handle(.reading(.status(checkEngine: true, storedCodes: 1)))
            vehicle.handle(.reading(.faults(codes: ["P0301"], pending: false)))
            vehicle.handle(.reading(.faults(codes: [], pending: true)))
            #expect(try await daemon.call(Methods.vehicleStatus).faults.map(\.code) == ["P0301"])
            #expect(try await daemon.call(Methods.outboxStatus).items == 0, "off shift nothing is queued")
            _ = try await daemon.call(Methods.shiftStart)
            _ = try await daemon.call(Methods.outboxFlush)
            try await daemon.waitUntil("the fault sent") { backend.world.activity.vehicleEvents.count == 1 }
            // Read again on shift: nothing new to say.
            vehicle.handle(.reading(.faults(codes: ["P0301"], pending: false)))
            vehicle.handle(.reading(.faults(codes: [], pending: true)))
            _ = try await daemon.call(Methods.outboxFlush)
            let events = backend.world.activity.vehicleEvents.map(\.report)
            #expect(events.count == 1 && events.first?.kind == .faultAppeared && events.first?.code == "P0301" && events.first?.checkEngine == true)
        }
    }
}

/// A trip's vehicle readings at its ends.
@Suite("Trip readings, in-process", .serialized)
struct TripReadingInProcessTests {
    @Test("after the ignition goes off the engine unit answers NO DATA, yet a trip that ends then ends at the last odometer and fuel the vehicle told; the run time starts again with the engine")
    func lastKnownAtIgnitionOff() async throws {
        let daemon = try InProcessDaemon(backend: nil) { $0.vehicleAdapter = "192.168.0.10:35000" }
        try await daemon.running {
            let vehicle = daemon.assembly.vehicle
            vehicle.handle(.link(.ok, detail: nil))
            for reading in [OBDReading.voltage(14.1), .rpm(1800), .odometerKm(12346.0), .fuelPercent(69), .runSeconds(300)] { vehicle.handle(.reading(reading)) }
            #expect(vehicle.tripReading() == VehicleReading(odometerKm: 12346.0, fuelPercent: 69, engineRunSeconds: 300))
            // Ignition off: every PID of the engine unit goes unavailable.
            for pid in [OBDPID.rpm, .odometer, .fuelLevel, .runTime] { vehicle.handle(.unavailable(pid)) }
            vehicle.handle(.reading(.voltage(12.4)))
            let status = try await daemon.call(Methods.vehicleStatus)
            #expect(status.odometerKm == nil && status.engineRunning == false, "\(status)")
            #expect(vehicle.tripReading() == VehicleReading(odometerKm: 12346.0, fuelPercent: 69, engineRunSeconds: 300))
            // The engine again: its run time is this run's, unknown until PID 1F answers.
            for reading in [OBDReading.voltage(14.1), .rpm(800)] { vehicle.handle(.reading(reading)) }
            #expect(vehicle.tripReading() == VehicleReading(odometerKm: 12346.0, fuelPercent: 69, engineRunSeconds: nil))
            vehicle.handle(.reading(.runSeconds(4)))
            #expect(vehicle.tripReading()?.engineRunSeconds == 4)
        }
    }
}

/// Parked with the engine off: battery-saver sampling (one fix a minute) with the receiver released between samples.
@Suite("Parked, engine off, in-process", .serialized)
struct EngineOffSamplingTests {
    @Test("the engine off while parked: a ping a minute from a receiver with 3-s epochs, and the reader told to release gpsd between them")
    func engineOffSamplesOnceAMinute() async throws {
        let daemon = try InProcessDaemon(backend: nil) { $0.vehicleAdapter = "192.168.0.10:35000" }
        try await daemon.running {
            var time = Date().timeIntervalSince1970.rounded()
            var paces: [GPSPace] = []
            func epoch() async {
                time += 3
                daemon.advance(by: 3)
                paces.append(await daemon.assembly.pipeline.handIn(.fix(Fix(
                    time: time, latitude: 49.0, longitude: 12.1, speed: 0, track: 0, horizontalError: 5, mode: 3))))
            }
            for _ in 0..<30 { await epoch() }
            daemon.assembly.vehicle.handle(.link(.noVehicle, detail: "UNABLE TO CONNECT"))
            daemon.assembly.vehicle.handle(.reading(.voltage(12.5)))
            daemon.assembly.pipeline.submit(.readPower)
            await daemon.assembly.pipeline.settle()
            // Taken: on disk or waiting in memory (a standing van's pings wait up to two minutes for the disk).
            func taken() async throws -> Int {
                let gps = try await daemon.call(Methods.gpsStatus)
                return gps.pingsRecorded + gps.pingsPending
            }
            let before = try await taken()
            paces.removeAll()
            for _ in 0..<100 { await epoch() }  // five minutes
            let recorded = try await taken() - before
            #expect((4...6).contains(recorded), "one ping a minute over five minutes: \(recorded)")
            let releases = paces.filter { if case .pause(_, true) = $0 { true } else { false } }
            #expect(releases.count >= 4, "a released pause after each sample: \(paces)")
        }
    }
}
