import DriverAPI
import Testing
@testable import DriverDomain

@Suite struct VehiclePollScheduleTests {
    @Test("moving: speed and RPM at the fix interval, the rest a minute; faults at ignition on, then every 10 minutes")
    func moving() {
        var schedule = VehiclePollSchedule()
        schedule.setMode(.moving(interval: 1))
        #expect(schedule.due(now: 0) == VehiclePollSchedule.Query.allCases)
        for query in VehiclePollSchedule.Query.allCases { schedule.ran(query, at: 0) }
        #expect(schedule.due(now: 1) == [.speedAndRPM])
        #expect(schedule.secondsUntilDue(now: 0.5) == 0.5)
        schedule.ran(.speedAndRPM, at: 1)
        #expect(schedule.due(now: 60) == [.speedAndRPM, .voltage, .fuel, .odometer, .runTime])
        #expect(schedule.interval(of: .faults) == 600)
    }

    @Test("parked: everything once a minute; ignition off: the voltage only; protecting: the voltage every 5 minutes")
    func quietModes() {
        var schedule = VehiclePollSchedule()
        schedule.setMode(.parked)
        #expect(schedule.interval(of: .speedAndRPM) == 60)
        schedule.setMode(.ignitionOff)
        #expect(VehiclePollSchedule.Query.allCases.filter { schedule.interval(of: $0) != nil } == [.voltage])
        schedule.ran(.voltage, at: 0)
        #expect(schedule.due(now: 30).isEmpty)
        #expect(schedule.secondsUntilDue(now: 30) == 30)
        schedule.setMode(.protecting)
        #expect(schedule.interval(of: .voltage) == 300)
        #expect(schedule.due(now: 200).isEmpty)
    }

    @Test("parked after a drive, the minute's queries and the speed fall into one request a minute, the fault codes riding on it")
    func parkedQueriesMerge() {
        var schedule = VehiclePollSchedule()
        schedule.setMode(.moving(interval: 1))
        for query in VehiclePollSchedule.Query.allCases { schedule.ran(query, at: 0) }
        // Driving: the speed every second, the rest at 60.
        for second in 1...63 { schedule.ran(.speedAndRPM, at: Double(second)) }
        for query in [VehiclePollSchedule.Query.voltage, .fuel, .odometer, .runTime] { schedule.ran(query, at: 60) }
        // Parked at 63: the minute's queries are due at 120, the speed at 123. At 120 they go together.
        schedule.setMode(.parked)
        #expect(schedule.due(now: 119).isEmpty)
        let first = schedule.due(now: 120)
        #expect(first == [.speedAndRPM, .voltage, .fuel, .odometer, .runTime])
        for query in first { schedule.ran(query, at: 120) }
        #expect(schedule.secondsUntilDue(now: 120) == 60)
        #expect(schedule.due(now: 180) == [.speedAndRPM, .voltage, .fuel, .odometer, .runTime])
        // The fault codes (every 10 minutes) ride on the minute's request whose turn comes before theirs.
        for query in VehiclePollSchedule.Query.allCases where query != .faults { schedule.ran(query, at: 580) }
        #expect(schedule.due(now: 640) == VehiclePollSchedule.Query.allCases)
    }

    @Test("the engine starting makes the fault codes due at once; pulling away the speed")
    func ignitionOnReadsFaults() {
        var schedule = VehiclePollSchedule()
        schedule.setMode(.parked)
        for query in VehiclePollSchedule.Query.allCases { schedule.ran(query, at: 0) }
        schedule.setMode(.ignitionOff)
        schedule.setMode(.parked)
        // The fault codes are due; the minute's queries, due within the minute, ride along (one request).
        #expect(schedule.due(now: 5) == VehiclePollSchedule.Query.allCases)
        schedule.ran(.faults, at: 5)
        schedule.setMode(.moving(interval: 1))
        #expect(schedule.due(now: 6) == [.speedAndRPM])
    }

    @Test func modeFromWhatTheDaemonKnows() {
        #expect(VehiclePollSchedule.mode(engineRunning: true, moving: true, protecting: true, fixInterval: 1) == .protecting)
        #expect(VehiclePollSchedule.mode(engineRunning: false, moving: true, protecting: false, fixInterval: 1) == .moving(interval: 1))
        #expect(VehiclePollSchedule.mode(engineRunning: false, moving: false, protecting: false, fixInterval: 1) == .ignitionOff)
        #expect(VehiclePollSchedule.mode(engineRunning: nil, moving: false, protecting: false, fixInterval: 10) == .parked)
    }
}

@Suite struct VehicleIgnitionTests {
    @Test func engineFromRPMOrChargingVoltage() {
        #expect(VehicleIgnition.engineRunning(rpm: 800, rpmAge: 1, voltage: 12.4) == true)
        #expect(VehicleIgnition.engineRunning(rpm: 0, rpmAge: 1, voltage: 12.4) == false)
        #expect(VehicleIgnition.engineRunning(rpm: nil, rpmAge: nil, voltage: 14.1) == true)
        #expect(VehicleIgnition.engineRunning(rpm: nil, rpmAge: nil, voltage: 12.5) == false)
        // An old RPM says nothing: with the ignition off only the voltage is read.
        #expect(VehicleIgnition.engineRunning(rpm: 800, rpmAge: 600, voltage: 12.5) == false)
        #expect(VehicleIgnition.engineRunning(rpm: nil, rpmAge: nil, voltage: nil) == nil)
    }
}

@Suite struct BatteryGuardTests {
    @Test("low with the engine off for the hold time: protect once; an SOS waiting or the engine on: never; recovery releases")
    func protectsOnce() {
        var guardian = BatteryGuard(threshold: 11.8, holdSeconds: 300)
        #expect(guardian.observe(voltage: 11.6, engineRunning: false, sosWaiting: false, now: 0) == nil)
        #expect(guardian.observe(voltage: 11.6, engineRunning: false, sosWaiting: false, now: 299) == nil)
        #expect(guardian.observe(voltage: 11.6, engineRunning: false, sosWaiting: true, now: 310) == nil)
        #expect(guardian.observe(voltage: 11.6, engineRunning: false, sosWaiting: false, now: 320) == .protect)
        #expect(guardian.observe(voltage: 11.5, engineRunning: false, sosWaiting: false, now: 400) == nil)
        // A little recovery once the load is gone is not enough.
        #expect(guardian.observe(voltage: 12.0, engineRunning: false, sosWaiting: false, now: 500) == nil)
        #expect(guardian.observe(voltage: 12.4, engineRunning: false, sosWaiting: false, now: 600) == .release)
        #expect(!guardian.isProtecting)
    }

    @Test("a dip that recovers restarts the hold; the engine running ends protection")
    func dipsAndEngine() {
        var guardian = BatteryGuard(threshold: 11.8, holdSeconds: 300)
        _ = guardian.observe(voltage: 11.6, engineRunning: false, sosWaiting: false, now: 0)
        _ = guardian.observe(voltage: 12.2, engineRunning: false, sosWaiting: false, now: 200)
        #expect(guardian.observe(voltage: 11.6, engineRunning: false, sosWaiting: false, now: 310) == nil)
        #expect(guardian.observe(voltage: 11.6, engineRunning: false, sosWaiting: false, now: 610) == .protect)
        #expect(guardian.observe(voltage: 11.0, engineRunning: true, sosWaiting: false, now: 620) == .release)
        #expect(guardian.observe(voltage: 11.0, engineRunning: true, sosWaiting: false, now: 2000) == nil)
    }
}

@Suite struct FaultChangesTests {
    @Test("appeared and cleared against what was reported; pending to stored is one of each")
    func changes() {
        let reported: Set = [VehicleFault(code: "P0420", pending: true), VehicleFault(code: "P0171", pending: false)]
        let current: Set = [VehicleFault(code: "P0420", pending: false, description: "Catalyst"), VehicleFault(code: "P0171", pending: false)]
        let changes = FaultChanges(reported: reported, current: current)
        #expect(changes.appeared == [VehicleFault(code: "P0420", pending: false)])
        #expect(changes.cleared == [VehicleFault(code: "P0420", pending: true)])
        #expect(FaultChanges(reported: current, current: current).isEmpty)
    }

    @Test func genericDescriptionsOnly() {
        #expect(FaultDescriptions.describe("p0301") == "Cylinder 1 misfire detected")
        #expect(FaultDescriptions.describe("P1234") == nil)
        #expect(FaultDescriptions.table.keys.allSatisfy { $0.hasPrefix("P0") || $0.hasPrefix("P2") })
    }
}

@Suite struct VehicleSpeedEvidenceTests {
    @Test("the gate: the vehicle's speed decides while no fix is fresh; a stop opens it after the settle time")
    func gateInATunnel() {
        var gate = SafetyGate(limit: 4.47, staleAfter: 10, settle: 3)
        _ = gate.observe(speed: 15, now: 0, nextFixWithin: 1)
        #expect(gate.state(now: 0) == .moving)
        // GNSS gone for two minutes; the vehicle reports 15 m/s every second.
        for second in 1...120 { _ = gate.observe(speed: 15, now: Double(second), nextFixWithin: 1, source: .vehicle) }
        #expect(gate.state(now: 120) == .moving)
        #expect(!gate.isOpen(now: 120))
        #expect(gate.observe(speed: 0, now: 121, nextFixWithin: 1, source: .vehicle) == nil)
        _ = gate.observe(speed: 0, now: 122, nextFixWithin: 1, source: .vehicle)
        #expect(gate.state(now: 122) == .stopping)
        #expect(gate.observe(speed: 0, now: 124, nextFixWithin: 1, source: .vehicle) == .opened)
        #expect(gate.isOpen(now: 124))
        // The adapter gone too: the speed is unknown again.
        _ = gate.vehicleLost(now: 125)
        #expect(gate.state(now: 125) == .unknown)
    }

    @Test("with both fresh, either one moving is moving")
    func conservativeWhenBothSpeak() {
        var gate = SafetyGate()
        _ = gate.observe(speed: 0, now: 0, nextFixWithin: 1)
        _ = gate.observe(speed: 8, now: 0, nextFixWithin: 1, source: .vehicle)
        #expect(gate.state(now: 5) == .moving)
    }

    @Test("GNSS only: today's behaviour, the speed unknown once the fixes stop")
    func gnssOnly() {
        var gate = SafetyGate()
        _ = gate.observe(speed: 15, now: 0, nextFixWithin: 1)
        #expect(gate.state(now: 11) == .unknown)
        #expect(!gate.isOpen(now: 11))
    }

    @Test("the motion detector: the vehicle's speed decides without a usable fix, the fixes again once they come")
    func motion() {
        var detector = MotionDetector()
        let fix = { (time: Double, speed: Double) in
            Fix(time: time, latitude: 52.5, longitude: 13.4 + time * 0.0002, altitude: nil, speed: speed, track: 90, climb: nil,
                horizontalError: 5, verticalError: nil, mode: 3, satellitesUsed: 9)
        }
        for second in 0..<5 { _ = detector.observe(fix(Double(second), 15)) }
        #expect(detector.motion == .moving)
        // The tunnel: a stop of 70 s without GNSS makes it stationary; moving again after 2 s of speed.
        for second in 0...70 { _ = detector.vehicleSpeed(0, at: 1000 + Double(second), gnssUsable: false) }
        #expect(detector.motion == .stationary)
        #expect(detector.gpsMotion == .moving)
        _ = detector.vehicleSpeed(10, at: 1071, gnssUsable: false)
        #expect(detector.vehicleSpeed(10, at: 1073, gnssUsable: false) == .changed(to: .moving))
        // With a usable fix the fixes decide, whatever the vehicle said.
        for second in 0...70 { _ = detector.vehicleSpeed(0, at: 2000 + Double(second), gnssUsable: true) }
        #expect(detector.motion == .moving)
    }
}

@Suite struct TripVehicleTests {
    @Test("the vehicle's side of a trip: its odometer's distance, the fuel at both ends, the engine's run time")
    func fromTwoReadings() throws {
        let trip = try #require(TripVehicle(
            start: VehicleReading(odometerKm: 12345.6, fuelPercent: 70.2, engineRunSeconds: 300),
            end: VehicleReading(odometerKm: 12351.6, fuelPercent: 68.4, engineRunSeconds: 900)))
        #expect(trip.distanceMeters == 6000 && trip.fuelStartPercent == 70.2 && trip.fuelEndPercent == 68.4 && trip.engineRunSeconds == 600)
        // The engine started again on the way: its run time restarted.
        #expect(TripVehicle(start: VehicleReading(odometerKm: nil, fuelPercent: nil, engineRunSeconds: 900),
                            end: VehicleReading(odometerKm: nil, fuelPercent: nil, engineRunSeconds: 120))?.engineRunSeconds == 120)
        #expect(TripVehicle(start: nil, end: nil) == nil)
        #expect(TripVehicle(start: nil, end: VehicleReading(odometerKm: nil, fuelPercent: nil, engineRunSeconds: nil)) == nil)
    }

    @Test("odometers disagree beyond 5 %, judged from 2 km (the car counts in 100 m steps)")
    func disagreement() throws {
        let six = try #require(TripVehicle(
            start: VehicleReading(odometerKm: 100, fuelPercent: nil, engineRunSeconds: nil),
            end: VehicleReading(odometerKm: 106, fuelPercent: nil, engineRunSeconds: nil)))
        #expect(!six.disagrees(gnssMeters: 5800))
        #expect(six.disagrees(gnssMeters: 5600))
        #expect(six.disagrees(gnssMeters: 6400))
        let short = try #require(TripVehicle(
            start: VehicleReading(odometerKm: 100, fuelPercent: nil, engineRunSeconds: nil),
            end: VehicleReading(odometerKm: 101, fuelPercent: nil, engineRunSeconds: nil)))
        #expect(!short.disagrees(gnssMeters: 500))
    }
}
