import BackendContract
import DispatchSimCore
import DriverAPI
import Foundation
import JSONRPC
import NMEASynth
import Testing

/// Stops that notice themselves, end to end: gpsd fed by gpsfake with a synthesised drive through the built-in
/// world of dispatch-sim, the real driverd and driverctl.
@Suite("Arrivals and visits by geofence", .ownThread)
struct ArrivalTests {
    /// The built-in world's places.
    static let pizzeria = SyntheticRoute.Point(lat: 49.02100, lon: 12.09700)  // task-1001 pickup
    static let bakery = SyntheticRoute.Point(lat: 49.01890, lon: 12.09880)  // task-1002 pickup
    static let customerA = SyntheticRoute.Point(lat: 49.01600, lon: 12.10050)  // task-1001 drop-off

    /// 250 m west of the pizzeria: drive there, 50 s there, on at 30 km/h straight through the bakery's stop to the
    /// customer, 90 s there (a kill -9, a restart and the proof fit in it under load), then away. Dated now (the unit's clock is not synchronised here).
    static func drive() -> SyntheticRoute {
        SyntheticRoute(
            start: .init(lat: pizzeria.lat, lon: pizzeria.lon - 250 / (111_320 * cos(pizzeria.lat * .pi / 180))),
            startTime: Date().timeIntervalSince1970.rounded(),
            legs: [
                .stop(seconds: 4),
                .drive(to: pizzeria, speed: 8), .stop(seconds: 50),
                .drive(to: bakery, speed: 8.33), .drive(to: customerA, speed: 8.33), .stop(seconds: 90),
                .drive(to: .init(lat: customerA.lat - 300 / 111_320, lon: customerA.lon), speed: 12), .stop(seconds: 6),
            ],
            noise: 3, seed: 15)
    }

    final class Rig {
        let directory = TemporaryDirectory()
        let sim: SimProcess
        let http: SimHTTP
        let gpsdPort = GPSFake.freePort()
        var daemon: DaemonProcess
        let config: String
        let ctl = Binaries.path("driverctl")

        init(mode: String) throws {
            sim = try SimProcess()
            http = SimHTTP(base: sim.base)
            config = Harness.config(backend: sim) + "\n[arrival]\nmode = \"\(mode)\"\n"
            daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:\(gpsdPort)"], config: config, directory: directory)
            try waitUntil("the route synced", timeout: .seconds(30), detail: daemon.log) { try self.route().stops.count == 4 }
        }

        func restart() throws {
            daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:\(gpsdPort)"], config: config, directory: directory)
        }

        @discardableResult
        func ctl(_ arguments: String..., expectFailure: Bool = false) throws -> ProcessOutcome {
            let outcome = try runProgram(ctl, arguments, environment: ["DRIVERD_SOCKET": daemon.socketPath])
            #expect((outcome.status == 0) != expectFailure, "driverctl \(arguments): \(outcome.stdout)\(outcome.stderr)")
            return outcome
        }

        func route() throws -> RouteView { try daemon.client().call(Methods.routeGet, NoParams()) }
        func task(_ id: String) throws -> TaskView? { try route().tasks.first { $0.id == id } }
        func stats() async throws -> SimStats { try await http.request(.GET, "/sim/stats").decode(SimStats.self) }
        func visits() async throws -> [VisitReceipt] { try await http.request(.GET, "/sim/visits").decode([VisitReceipt].self) }

        func waitForStatus(_ id: String, _ status: TaskStatus, timeout: Duration = .seconds(120)) throws {
            try waitUntil("\(id) \(status.rawValue)", timeout: timeout, detail: daemon.log) { try self.task(id)?.status == status }
        }
    }

    @Test("auto: one geofence arrival per stop of a drive, none at a stop passed at 30 km/h; kill -9 after an arrival sends it once; both visits reach the backend once", .tags(.longest))
    func autoArrivals() async throws {
        let rig = try Rig(mode: "auto")
        try rig.ctl("accept", "--task", "task-1001")
        try rig.ctl("accept", "--task", "task-1002")
        // The live view, in plain lines, until the unit is killed below (its first line: subscribed).
        let watch = try BackgroundProgram(
            rig.ctl, ["watch", "--seconds", "240", "--refresh", "5"], environment: ["DRIVERD_SOCKET": rig.daemon.socketPath],
            directory: rig.directory, name: "watch.out")
        try waitUntil("the watch to show", timeout: .seconds(20)) { !watch.output.isEmpty }
        let log = try Harness.synthesise(Self.drive(), rig.directory, "drive.nmea")
        // Twice real time: a minute's stop is 30 s here; the rules count receiver time.
        let fake = try GPSFake(log: log, delay: 0.25, port: rig.gpsdPort)
        defer { fake.kill() }

        try rig.waitForStatus("task-1001", .arrivedAtStore)
        let card = try rig.ctl("next").stdout
        try rig.ctl("pickup", "--task", "task-1001")
        // The link goes down before the destination: the arrival waits in the outbox when the unit is killed.
        _ = try await rig.http.request(.PUT, "/sim/faults", json: FaultPlan(dropBeforeRate: 1))
        _ = try await rig.http.request(.POST, "/sim/websockets/close")
        try rig.waitForStatus("task-1001", .arrivedAtDestination)
        // The drop-off's visit opens with the arrival; its event reaches the watch before the kill ends it (a
        // loaded machine once killed the unit between the two).
        try waitUntil("the watch to show the drop-off's visit", timeout: .seconds(20), detail: watch.output) {
            watch.output.contains("at task-1001-dropoff since")
        }
        try rig.daemon.stop(signal: SIGKILL)
        try rig.restart()
        _ = try await rig.http.request(.DELETE, "/sim/faults")
        try waitUntil("the gate to open", timeout: .seconds(30), detail: rig.daemon.log) {
            try rig.daemon.client().call(Methods.agentStatus, NoParams()).safety?.state == .stationary
        }
        try rig.ctl("pod", "otp", "4812", "--task", "task-1001")
        try rig.ctl("deliver", "--task", "task-1001")
        // Driving away closes the drop-off's visit.
        try waitUntil("both visits queued or sent", timeout: .seconds(90), detail: rig.daemon.log) {
            try rig.daemon.client().call(Methods.visitsList, NoParams()).visits.filter { $0.state != "open" }.count == 2
        }
        _ = try Harness.drain(rig.daemon)
        // The watch saw the visits as they happened, until the kill ended its connection.
        let watched = watch.finish(within: .seconds(1))
        for line in ["at task-1001-pickup since", "(geofence,", "left task-1001-pickup after", "at task-1001-dropoff since"] {
            #expect(watched.contains(line), "driverctl watch shows the visits live: \(watched)")
        }

        let stats = try await rig.stats()
        let updates = stats.statusUpdates.filter { $0.taskId == "task-1001" }
        #expect(updates.map(\.status) == [.accepted, .arrivedAtStore, .pickedUp, .arrivedAtDestination, .delivered], "\(updates)")
        #expect(updates.filter { $0.status == .arrivedAtStore || $0.status == .arrivedAtDestination }.allSatisfy { $0.source == .geofence })
        #expect(updates.filter { $0.status == .pickedUp || $0.status == .delivered }.allSatisfy { $0.source == .driver })
        let delivered = try #require(updates.last)
        #expect((delivered.stopDistance ?? 999) <= 100, "delivered \(delivered.stopDistance ?? -1) m from the stop")
        #expect(delivered.outsideReason == nil && delivered.position == nil)
        #expect(stats.statusUpdates.filter { $0.taskId == "task-1002" }.map(\.status) == [.accepted], "passed at 30 km/h: no arrival")

        let visits = try await rig.visits().filter { $0.report.taskId == "task-1001" }
        #expect(visits.map(\.report.stopId).sorted() == ["task-1001-dropoff", "task-1001-pickup"], "\(visits)")
        for visit in visits {
            #expect(visit.report.arrivalSource == .geofence)
            #expect(visit.report.dwellSeconds >= 20 && visit.report.dwellSeconds <= 120, "\(visit.report)")
            #expect((visit.report.arrivalDistance ?? 999) <= 100)
            #expect(!visit.report.leftUnfinished)
        }
        #expect(card.contains("Picked up") && card.contains("m from here"), "the card after the geofence's arrival: \(card)")
        let listed = try rig.ctl("visits").stdout
        #expect(listed.contains("task-1001-pickup") && listed.contains("geofence") && listed.contains("sent"), "\(listed)")
        try rig.daemon.stop()
    }

    @Test("suggest: the arrival is suggested (event and card), not performed; a delivery 400 m away is refused without a reason and accepted with one", .tags(.long))
    func suggestAndOutside() async throws {
        let rig = try Rig(mode: "suggest")
        try rig.ctl("accept", "--task", "task-1001")
        let events = try SubscribedConnection(rig.daemon, topics: [Events.arrivalSuggested.topic], timeout: 90)
        // Drive to the pizzeria and stand there.
        let start = SyntheticRoute.Point(lat: Self.pizzeria.lat - 300 / 111_320, lon: Self.pizzeria.lon)
        let route = SyntheticRoute(
            start: start, startTime: Date().timeIntervalSince1970.rounded(), legs: [.stop(seconds: 4), .drive(to: Self.pizzeria, speed: 10), .stop(seconds: 400)],
            noise: 3, seed: 4)
        let fake = try GPSFake(log: try Harness.synthesise(route, rig.directory, "pizzeria.nmea"), delay: 0.25, port: rig.gpsdPort)
        defer { fake.kill() }
        let suggestion = try events.waitFor(Events.arrivalSuggested.topic)
        #expect(suggestion["stopId"] == .string("task-1001-pickup"), "\(suggestion)")
        let card = try rig.daemon.client().call(Methods.routeNext, NoParams())
        #expect(card.next?.arrivalDetected?.stopId == "task-1001-pickup" && card.next?.arrivalDetected?.mode == .suggest)
        #expect(try rig.ctl("next").stdout.contains("arrival detected"))
        #expect(try rig.task("task-1001")?.status == .accepted, "suggest does not perform the arrival")
        try rig.ctl("arrive", "--task", "task-1001")
        try rig.ctl("pickup", "--task", "task-1001")
        // The customer is about 560 m from the pizzeria: tapping "arrived" there is the driver's call, a delivery
        // is not.
        try rig.ctl("arrive", "--task", "task-1001")
        try waitUntil("the gate to open", timeout: .seconds(30), detail: rig.daemon.log) {
            try rig.daemon.client().call(Methods.agentStatus, NoParams()).safety?.state == .stationary
        }
        try rig.ctl("pod", "otp", "4812", "--task", "task-1001")
        let refused = try rig.ctl("deliver", "--task", "task-1001", expectFailure: true)
        #expect(refused.stderr.contains("m from the stop") && refused.stderr.contains("CUSTOMER_MET_ELSEWHERE"), "\(refused.stderr)")
        #expect(try rig.task("task-1001")?.status == .arrivedAtDestination)
        try rig.ctl("deliver", "--task", "task-1001", "--outside-reason", "customer-met-elsewhere")
        _ = try Harness.drain(rig.daemon)
        let updates = try await rig.stats().statusUpdates.filter { $0.taskId == "task-1001" }
        let delivered = try #require(updates.last)
        #expect(delivered.status == .delivered && delivered.outsideReason == .customerMetElsewhere)
        #expect((450...700).contains(delivered.stopDistance ?? 0), "\(delivered)")
        let visits = try rig.daemon.client().call(Methods.visitsList, NoParams()).visits
        let pickup = try #require(visits.first { $0.stopId == "task-1001-pickup" })
        #expect(pickup.arrivalSource == .geofence, "the detected arrival dates the visit")
        try rig.daemon.stop()
    }

    @Test("auto: ten minutes parked on the destination's border with 15 m of scatter and spikes: one arrival, no departure, nothing left unfinished", .tags(.long))
    func borderScatter() async throws {
        let rig = try Rig(mode: "auto")
        for action in ["accept", "arrive", "pickup"] { try rig.ctl(action, "--task", "task-1001") }
        let events = try SubscribedConnection(rig.daemon, topics: [Events.stopLeftUnfinished.topic], timeout: 5)
        // From 400 m south to 100 m south of the customer (the geofence's edge), then ten minutes parked there.
        let border = SyntheticRoute.Point(lat: Self.customerA.lat - 100 / 111_320, lon: Self.customerA.lon)
        let route = SyntheticRoute(
            start: .init(lat: Self.customerA.lat - 400 / 111_320, lon: Self.customerA.lon), startTime: Date().timeIntervalSince1970.rounded(),
            legs: [.drive(to: border, speed: 10), .stop(seconds: 600)], noise: 15, seed: 23,
            spikes: .init(share: 0.02, minMetres: 100, maxMetres: 1500))
        // Ten times real time: the rules count receiver time.
        let fake = try GPSFake(log: try Harness.synthesise(route, rig.directory, "border.nmea"), delay: 0.05, port: rig.gpsdPort)
        defer { fake.kill() }
        try rig.waitForStatus("task-1001", .arrivedAtDestination, timeout: .seconds(60))
        _ = try Harness.settled(rig.daemon, fake: fake, minimumFixes: 200, timeout: .seconds(150))
        _ = try Harness.drain(rig.daemon)
        let arrivals = try await rig.stats().statusUpdates.filter { $0.taskId == "task-1001" && $0.status == .arrivedAtDestination }
        #expect(arrivals.count == 1 && arrivals.first?.source == .geofence, "\(arrivals)")
        let visits = try rig.daemon.client().call(Methods.visitsList, NoParams()).visits.filter { $0.stopId == "task-1001-dropoff" }
        #expect(visits.count == 1 && visits.first?.state == "open" && visits.first?.leftUnfinished == false, "\(visits)")
        #expect(try await rig.visits().isEmpty, "no departure reached the backend")
        #expect(throws: (any Error).self, "no stop.leftUnfinished") { _ = try events.waitFor(Events.stopLeftUnfinished.topic) }
        try rig.daemon.stop()
    }
}
