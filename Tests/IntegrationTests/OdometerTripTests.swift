import BackendContract
import DispatchSimCore
import DriverAPI
import DriverDomain
import Foundation
import JSONRPC
import NMEASynth
import Testing

/// The odometer, trips and idling end to end: gpsd fed by gpsfake with synthesised drives of known length, the
/// real driverd, dispatch-sim receiving the trips and idle periods.
@Suite("Odometer, trips and idling", .ownThread)
struct OdometerTripTests {
    /// A loop through Regensburg of about 6.4 km: straight legs at town speeds with two stops.
    static func loop(spikes: SyntheticRoute.Spikes?) -> SyntheticRoute {
        let points: [(Double, Double, Double)] = [
            (49.0250, 12.0900, 13), (49.0250, 12.1100, 14), (49.0150, 12.1100, 9), (49.0150, 12.0950, 12), (49.0200, 12.0850, 11),
        ]
        var legs: [SyntheticRoute.Leg] = []
        for (index, point) in points.enumerated() {
            legs.append(.drive(to: .init(lat: point.0, lon: point.1), speed: point.2))
            if index == 1 || index == 3 { legs.append(.stop(seconds: 30)) }
        }
        legs.append(.stop(seconds: 20))
        return SyntheticRoute(
            start: .init(lat: 49.0200, lon: 12.0850), startTime: Date().timeIntervalSince1970.rounded(), legs: legs, noise: 4, seed: 31,
            spikes: spikes)
    }

    static func length(_ route: SyntheticRoute) -> Double {
        var position = route.start, metres = 0.0
        for case .drive(let to, _) in route.legs {
            metres += Geo.distance(latitude1: position.lat, longitude1: position.lon, latitude2: to.lat, longitude2: to.lon)
            position = to
        }
        return metres
    }

    static func replay(_ route: SyntheticRoute, config extra: String = "", until: (DaemonProcess) throws -> Bool) throws -> (DaemonProcess, SimProcess) {
        let directory = TemporaryDirectory()
        let sim = try SimProcess()
        let fake = try GPSFake(log: try Harness.synthesise(route, directory), delay: 0.02)
        defer { fake.kill() }
        let daemon = try DaemonProcess(arguments: ["--gpsd", fake.endpoint], config: Harness.config(backend: sim) + extra, directory: directory)
        try waitUntil("the replay", timeout: .seconds(120), detail: daemon.log) { try until(daemon) }
        return (daemon, sim)
    }

    /// An ignition input (a file, on at first) read every second, and the config that points driverd at it.
    static func ignition(in directory: TemporaryDirectory, backend sim: SimProcess, extra: String = "") throws -> (file: String, config: String) {
        let file = directory.file("ignition")
        try "1\n".write(toFile: file, atomically: true, encoding: .utf8)
        return (file, Harness.config(backend: sim) + """
            [ignition]
            path = "\(file)"
            [battery]
            poll_seconds = 1

            """ + extra)
    }

    static func shift(_ daemon: DaemonProcess) throws -> ShiftTravel {
        try #require(try daemon.client().call(Methods.shiftStatus, NoParams()).travel)
    }

    @Test("a replayed drive of known length: the odometer within 2 %, and within 2.5 % with 1 % of fixes thrown off by multipath", arguments: [false, true])
    func odometer(_ spiky: Bool) async throws {
        let route = Self.loop(spikes: spiky ? .init(share: 0.01, minMetres: 40, maxMetres: 1500) : nil)
        let truth = Self.length(route)
        let (daemon, sim) = try Self.replay(route) { daemon in
            // The replay is over when no fix has come for 3 s.
            let status = try Harness.status(daemon)
            return status.fixesSeen > 100 && (status.lastFixAge ?? 0) > 3
        }
        let travel = try Self.shift(daemon)
        let error = abs(travel.odometerMeters - truth) / truth
        #expect(error <= (spiky ? 0.025 : 0.02), "odometer \(travel.odometerMeters) m against \(Int(truth)) m (\(error * 100) %)")
        #expect(travel.bridgedMeters == 0)
        #expect(travel.tripInProgress, "the loop ends with a short stop: its trip goes on")
        try daemon.stop()
        _ = sim
    }

    @Test("ignition on and standing for five minutes: one idle pair; a trip ends 60 s after the ignition goes off; both reach the backend once", .tags(.long))
    func idleAndTripEnd() async throws {
        let directory = TemporaryDirectory()
        let start = SyntheticRoute.Point(lat: 49.0200, lon: 12.0850)
        let startTime = Date().timeIntervalSince1970.rounded()
        // Drive 30 s, stand 330 s with the engine on, drive 30 s, stand 100 s: the ignition goes off as it stops.
        let route = SyntheticRoute(
            start: start, startTime: startTime,
            legs: [
                .drive(to: .init(lat: start.lat + 300 / 111_320, lon: start.lon), speed: 10), .stop(seconds: 330),
                .drive(to: .init(lat: start.lat + 600 / 111_320, lon: start.lon), speed: 10), .stop(seconds: 100),
            ],
            noise: 3, seed: 8)
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        // Eight times real time; the motion detector's verdict takes two minutes here, so only the ignition can end
        // the second trip within a minute.
        let fake = try GPSFake(log: try Harness.synthesise(route, directory), delay: 0.0625)
        defer { fake.kill() }
        let (ignition, config) = try Self.ignition(in: directory, backend: sim, extra: "[motion]\nstationary_seconds = 120\n")
        let daemon = try DaemonProcess(arguments: ["--gpsd", fake.endpoint], config: config, directory: directory)
        let recorded = try SubscribedConnection(daemon, topics: [Events.tripRecorded.topic], timeout: 120)
        func fixTime() throws -> Double { try Harness.status(daemon).lastFix.map { $0.time - startTime } ?? 0 }
        try waitUntil("the second drive's end", timeout: .seconds(120), detail: daemon.log) { try fixTime() >= 388 }
        try "0\n".write(toFile: ignition, atomically: true, encoding: .utf8)
        var endedAt = 0.0
        try await waitUntil("the second trip at the backend", timeout: .seconds(60), detail: daemon.log) {
            _ = try daemon.client(timeout: .seconds(30)).call(Methods.outboxFlush, NoParams())
            endedAt = try fixTime()
            return try await http.request(.GET, "/sim/activity").decode(ActivityList.self).trips.count >= 2
        }
        // Off at 388 to 397 (the input is read every second, eight seconds of receiver time); the trip ends 60 s
        // later, long before the two minutes the motion detector would need.
        #expect(endedAt >= 440 && endedAt < 505, "the second trip ended at \(endedAt) s")
        let activity = try await http.request(.GET, "/sim/activity").decode(ActivityList.self)
        #expect(activity.trips.count == 2 && activity.idles.count == 1, "\(activity)")
        if activity.trips.count == 2 {
            let first = activity.trips[0].report, second = activity.trips[1].report
            #expect(abs(first.startedAt - startTime) <= 3 && abs(first.endedAt - startTime - 30) <= 3, "\(first)")
            #expect(abs(first.distanceMeters - 300) <= 15 && abs(second.distanceMeters - 300) <= 15, "\(activity.trips)")
            #expect(abs(second.endedAt - startTime - 390) <= 8, "\(second)")
        }
        if let idle = activity.idles.first?.report {
            #expect(abs(idle.durationSeconds - 330) <= 8 && abs(idle.startedAt - startTime - 30) <= 4, "\(idle)")
        }
        let travel = try Self.shift(daemon)
        #expect(travel.trips == 2 && !travel.tripInProgress && abs(travel.idleSeconds - 330) <= 8, "\(travel)")
        #expect(abs(travel.odometerMeters - 600) <= 25, "\(travel)")
        let listed = try runProgram(Binaries.path("driverctl"), ["trips"], environment: ["DRIVERD_SOCKET": daemon.socketPath])
        #expect(listed.stdout.contains("idle") && listed.stdout.contains("trip"), "\(listed.stdout)")
        // Front ends heard each as it ended: the first trip, the idling, the second trip.
        let kinds = try (0..<3).map { _ in try recorded.waitFor(Events.tripRecorded.topic)["kind"] }
        #expect(kinds == [.string("trip"), .string("idle"), .string("trip")], "\(kinds)")
        // Restarted, the odometer goes on from where it was.
        try daemon.stop(signal: SIGKILL)
        let again = try DaemonProcess(arguments: ["--gpsd", fake.endpoint], config: config, directory: directory)
        #expect(abs(try Self.shift(again).odometerMeters - travel.odometerMeters) <= 20, "the odometer survives kill -9")
        try again.stop()
    }

    @Test("into a garage: the fixes stop during a trip and the ignition goes off; time alone ends the trip a minute later, dated at the stand, sent once", .tags(.long))
    func garage() async throws {
        let directory = TemporaryDirectory()
        let start = SyntheticRoute.Point(lat: 49.0200, lon: 12.0850)
        let startTime = Date().timeIntervalSince1970.rounded()
        // 400 m at 10 m/s, then three seconds standing: the log (and the receiver's view of the sky) ends there.
        let route = SyntheticRoute(
            start: start, startTime: startTime, legs: [.drive(to: .init(lat: start.lat + 400 / 111_320, lon: start.lon), speed: 10), .stop(seconds: 3)],
            noise: 3, seed: 12)
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let fake = try GPSFake(log: try Harness.synthesise(route, directory), delay: 0.125)
        defer { fake.kill() }
        let (ignition, config) = try Self.ignition(in: directory, backend: sim)
        let daemon = try DaemonProcess(arguments: ["--gpsd", fake.endpoint], config: config, directory: directory)
        try waitUntil("the trip under way and the stand reached", timeout: .seconds(90), detail: daemon.log) {
            let fixTime = try Harness.status(daemon).lastFix.map { $0.time - startTime } ?? 0
            return try Self.shift(daemon).tripInProgress && fixTime >= 41
        }
        fake.kill()
        try "0\n".write(toFile: ignition, atomically: true, encoding: .utf8)
        let off = ContinuousClock.now
        try await waitUntil("the trip at the backend", timeout: .seconds(200), detail: daemon.log) {
            _ = try daemon.client(timeout: .seconds(30)).call(Methods.outboxFlush, NoParams())
            return try await !http.request(.GET, "/sim/activity").decode(ActivityList.self).trips.isEmpty
        }
        let waited = ContinuousClock.now - off
        // Not before the minute; the upper bound allows a loaded machine's polling and sending.
        #expect(waited >= .seconds(55) && waited < .seconds(180), "the trip ended \(waited) after the ignition went off")
        let trips = try await http.request(.GET, "/sim/activity").decode(ActivityList.self).trips
        #expect(trips.count == 1, "\(trips)")
        if let trip = trips.first?.report {
            #expect(abs(trip.distanceMeters - 400) <= 25, "\(trip)")
            #expect(abs(trip.endedAt - startTime - 40) <= 4, "dated at the stand: \(trip.endedAt - startTime) s")
        }
        #expect(try !Self.shift(daemon).tripInProgress)
        try daemon.stop()
    }

    @Test("harsh driving: parked a minute with scatter, a gentle pull-away, then a 4.5 m/s² stop from 49 km/h: one harsh braking at the backend, nothing else")
    func harshBraking() async throws {
        let start = SyntheticRoute.Point(lat: 49.0200, lon: 12.0850)
        let route = SyntheticRoute(
            start: start, startTime: Date().timeIntervalSince1970.rounded(),
            legs: [
                .stop(seconds: 60), .ramp(speed: 13.5, rate: 1.5), .drive(to: .init(lat: start.lat + 600 / 111_320, lon: start.lon), speed: 13.5),
                .ramp(speed: 0, rate: 4.5), .stop(seconds: 20),
            ],
            noise: 5, seed: 21)
        let (daemon, sim) = try Self.replay(route) { daemon in
            let speed = try Harness.status(daemon).lastFix?.speed ?? 1
            return try speed < 0.5 && Self.shift(daemon).odometerMeters > 550
        }
        let http = SimHTTP(base: sim.base)
        try await waitUntil("the event at the backend", timeout: .seconds(60), detail: daemon.log) {
            _ = try daemon.client(timeout: .seconds(30)).call(Methods.outboxFlush, NoParams())
            return try await !http.request(.GET, "/sim/activity").decode(ActivityList.self).harshEvents.isEmpty
        }
        let events = try await http.request(.GET, "/sim/activity").decode(ActivityList.self).harshEvents.map(\.report)
        #expect(events.count == 1, "\(events)")
        if let event = events.first {
            #expect(event.kind == .braking && abs(event.peakMps2 - 4.5) <= 0.7 && event.thresholdMps2 == 3.5, "\(event)")
            #expect(event.speedFrom >= 11 && event.speedTo <= 3, "\(event)")
            #expect(abs(event.location.lat - (start.lat + 600 / 111_320)) * 111_320 < 40, "where the braking began: \(event.location)")
        }
        #expect(try Self.shift(daemon).harshEvents == 1)
        #expect(try runProgram(Binaries.path("driverctl"), ["shift"], environment: ["DRIVERD_SOCKET": daemon.socketPath]).stdout.contains("1 harsh driving event"))
        try daemon.stop()
    }
}
