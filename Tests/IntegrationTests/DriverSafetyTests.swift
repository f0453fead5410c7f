import BackendContract
import DispatchSimCore
import DriverAPI
import DriverStore
import Foundation
import JSONRPC
import NMEASynth
import Testing

/// Pushes and the driving-safety gate, shifts, and the rest of auth, against gpsd fed by gpsfake and the
/// reference backend.
@Suite("Pushes, safety gate, shifts and auth", .ownThread)
struct DriverSafetyTests {
    /// A drive at 12 m/s on a loop for as long as the test needs it (fed faster than real time); then the
    /// test puts a parked receiver on the same port, and the daemon reconnects to it.
    static func writeLog(_ route: SyntheticRoute, _ path: String) throws -> String {
        try NMEAWriter.log(route).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func safety(_ daemon: DaemonProcess) throws -> SafetyStatus {
        try #require(try daemon.client().call(Methods.agentStatus, NoParams()).safety)
    }

    static func gateError(_ body: () throws -> Void) -> APIError? {
        do {
            try body()
            return nil
        } catch let failure as RPCClient.Failure {
            if case .server(let error) = failure { return error }
            return nil
        } catch {
            return nil
        }
    }

    @Test("while driving: actions that need attention get 'pull over to complete', a message is held and summarised; at the stop it is delivered and the same actions succeed")
    func safetyGate() async throws {
        let directory = TemporaryDirectory()
        let driving = try GPSFake(log: try Self.writeLog(RoutePresets.driving(laps: 20, speed: 12), directory.file("drive.nmea")), delay: 0.1, loop: true)
        let rig = try WorkflowTests.Rig(gpsd: driving.endpoint, ignition: nil, directory: directory)
        let events = try SubscribedConnection(
            rig.daemon, topics: [Events.push.topic, Events.pushSummary.topic, Events.safetyChanged.topic], timeout: 120)
        for action in ["accept", "arrive", "pickup", "arrive"] { try rig.ctl(action, "--task", "task-1001") }
        try rig.waitFor("driving", timeout: .seconds(60)) { try Self.safety(rig.daemon).state == .moving }
        // A screen reads the closed gate with the daemon's reason for its disabled buttons (API 1.9); it learns
        // of the gate opening from safety.changed below.
        let closed = try Self.safety(rig.daemon)
        #expect(closed.open == false && closed.reason?.hasPrefix("pull over to complete") == true, "\(closed)")

        let sent = try await rig.http.request(.POST, "/sim/messages", json: ["driverId": "drv-1", "taskId": "task-1001", "text": "leave it at the door"])
        let push = try sent.decode(Push.self)
        let summary = try events.waitFor(Events.pushSummary.topic)
        #expect(summary["held"]?.number == 1 && summary["summary"] == .string("1 message"), "\(summary)")
        #expect(!events.received.contains { $0.0 == Events.push.topic }, "nothing interruptive while driving")

        let client = try rig.daemon.client()
        let otp = Self.gateError { _ = try client.call(Methods.podOTP, OTPParams(taskId: "task-1001", otp: "4812")) }
        #expect(otp?.kind == .drivingGate && otp?.message.hasPrefix("pull over to complete") == true, "\(String(describing: otp))")
        let ack = Self.gateError { _ = try client.call(Methods.eventsAck, AckParams(id: push.id)) }
        #expect(ack?.kind == .drivingGate)
        let deliver = try rig.ctl("deliver", "--task", "task-1001", expectFailure: true)
        #expect(deliver.stderr.contains("pull over to complete"), "\(deliver.stderr)")
        let pending = try client.call(Methods.eventsPending, NoParams())
        #expect(pending.pending == 1 && pending.held == 1 && pending.summary == "1 message")

        driving.kill()
        let parked = try GPSFake(
            log: try Self.writeLog(RoutePresets.parked(seconds: 900), directory.file("parked.nmea")), delay: 0.1, port: driving.port)

        // The vehicle stops: the gate opens, the message comes, and the same actions go through.
        var opened = try events.waitFor(Events.safetyChanged.topic)
        while opened["open"] != .bool(true) { opened = try events.waitFor(Events.safetyChanged.topic) }
        #expect(opened["state"] == .string("stationary") && opened["reason"] == nil, "\(opened)")
        let delivered = try events.waitFor(Events.push.topic)
        #expect(delivered["id"]?.number == push.id && delivered["message"] == .string("leave it at the door"))
        #expect(try Self.safety(rig.daemon).state == .stationary)
        #expect(try client.call(Methods.podOTP, OTPParams(taskId: "task-1001", otp: "4812")).task.pod == .accepted)
        // The synthetic drive is in Berlin, the built-in world's stops in Regensburg: a reason is needed so far away.
        try rig.ctl("deliver", "--task", "task-1001", "--outside-reason", "other")
        #expect(try client.call(Methods.eventsAck, AckParams(id: push.id)).pending == 0)
        // driverctl watch, not on a terminal, prints a status line and a line per push: one that starts after a
        // push came gets it too, since nobody acknowledged it.
        _ = try await rig.http.request(.POST, "/sim/messages", json: ["driverId": "drv-1", "text": "new entrance at the back"])
        while try events.waitFor(Events.push.topic)["message"] != .string("new entrance at the back") {}
        let watched = try runProgram(
            Binaries.path("driverctl"), ["watch", "--seconds", "3", "--refresh", "0.5"], environment: ["DRIVERD_SOCKET": rig.daemon.socketPath])
        #expect(watched.status == 0, "\(watched.stderr)")
        #expect(watched.stdout.contains("Message from dispatch: new entrance at the back"), "\(watched.stdout)")
        #expect(watched.stdout.contains("ON SHIFT · stopped · link online"), "\(watched.stdout)")
        // A front end that connects later gets what nobody acknowledged; an acknowledged push is gone.
        _ = try await rig.http.request(.POST, "/sim/messages", json: ["driverId": "drv-1", "text": "door code on the sign"])
        while try events.waitFor(Events.push.topic)["message"] != .string("door code on the sign") {}
        let late = try SubscribedConnection(rig.daemon, topics: [Events.push.topic])
        var replayed: [JSONValue] = []
        while replayed.count < 6, !replayed.contains(.string("door code on the sign")) {
            replayed.append(try late.waitFor(Events.push.topic)["message"] ?? .null)
        }
        #expect(replayed.contains(.string("new entrance at the back")) && replayed.contains(.string("door code on the sign")), "\(replayed)")
        #expect(!replayed.contains(.string("leave it at the door")), "the acknowledged push is not sent again")
        try rig.daemon.stop()
        parked.kill()
    }

    @Test("off shift nothing is recorded or sent; on shift pings flow; after the shift ends they stop")
    func shifts() async throws {
        let directory = TemporaryDirectory()
        let drive = directory.file("drive.nmea")
        try NMEAWriter.log(RoutePresets.driving(laps: 4)).write(toFile: drive, atomically: true, encoding: .utf8)
        let fake = try GPSFake(log: drive, delay: 0.05)
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let daemon = try DaemonProcess(
            arguments: ["--gpsd", fake.endpoint], config: Harness.config(backend: sim), directory: directory, onShift: false)
        let client = try daemon.client(timeout: .seconds(60))
        #expect(try client.call(Methods.shiftStatus, NoParams()).onShift == false)
        let offShift = try Harness.waitFor(daemon) { $0.fixesSeen >= 30 }.0
        #expect(offShift.pingsRecorded == 0 && offShift.pingsPending == 0, "\(offShift)")
        #expect(try await http.request(.GET, "/sim/stats").decode(SimStats.self).uniquePings == 0)

        #expect(try client.call(Methods.shiftStart, NoParams()).onShift)
        let onShift = try Harness.waitFor(daemon) { $0.pingsRecorded >= 20 }.0
        #expect(onShift.pingsRecorded >= 20)

        let ended = try client.call(Methods.shiftEnd, NoParams())
        #expect(!ended.onShift && ended.endedAt != nil)
        let recorded = try daemon.client().call(Methods.gpsStatus, NoParams()).pingsRecorded
        let sent = try await http.request(.GET, "/sim/stats").decode(SimStats.self).uniquePings
        #expect(sent == recorded, "the shift's pings went out before it ended")
        let before = try daemon.client().call(Methods.gpsStatus, NoParams()).fixesSeen
        try await Task.sleep(for: .seconds(4))
        let after = try daemon.client().call(Methods.gpsStatus, NoParams())
        #expect(after.fixesSeen > before + 10, "gpsd still feeds fixes")
        #expect(after.pingsRecorded == recorded, "nothing recorded off shift")
        #expect(try await http.request(.GET, "/sim/stats").decode(SimStats.self).uniquePings == sent, "nothing sent off shift")
        try daemon.stop()
        fake.kill()
    }

    @Test("a login older than its limit pauses the uplink with auth.required while the outbox fills; a new login sends it all")
    func loginExpiry() async throws {
        let directory = TemporaryDirectory()
        let sim = try SimProcess()
        let ignition = directory.file("ignition")
        try "0\n".write(toFile: ignition, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(
            arguments: ["--gpsd", "127.0.0.1:1"],
            config: Harness.config(backend: sim, credentials: false) + "\n[auth]\nmax_login_age_hours = 0.001\n[ignition]\npath = \"\(ignition)\"\n",
            directory: directory)
        let ctl = Binaries.path("driverctl")
        func login() throws {
            let outcome = try runProgram(ctl, ["login", "--username", "rider1"], environment: ["DRIVERD_SOCKET": daemon.socketPath], stdin: "demo-password\n")
            #expect(outcome.status == 0, "\(outcome.stderr)")
        }
        try login()
        let client = try daemon.client(timeout: .seconds(60))
        let events = try SubscribedConnection(daemon, topics: [Events.authRequired.topic])
        try waitUntil("the route synced", timeout: .seconds(30), detail: daemon.log) { try !client.call(Methods.routeGet, NoParams()).stops.isEmpty }
        _ = try client.call(Methods.taskAccept, TaskParams(taskId: "task-1001"))
        _ = try Harness.drain(daemon)
        // 0.001 h is 3.6 s: past it the stored login is refused by the daemon itself.
        try await Task.sleep(for: .seconds(4))
        _ = try client.call(Methods.taskArrive, TaskParams(taskId: "task-1001"))
        let required = try events.waitFor(Events.authRequired.topic)
        #expect(required["reason"].map { JSONWriter.string($0).contains("older than") } == true, "\(required)")
        let status = try client.call(Methods.outboxFlush, NoParams())
        #expect(status.link == .authRequired && status.transitions == 1)
        try login()
        // Not the link's state after the drain: this login too is refused 3.6 s after it, which a loaded machine's
        // drain can outlast (auth.required again, rightly). What it sent is the point.
        let drained = try Harness.drain(daemon)
        #expect(drained.deadLetters == 0, "nothing refused: \(drained)")
        let stats = try await SimHTTP(base: sim.base).request(.GET, "/sim/stats").decode(SimStats.self)
        #expect(stats.statusUpdates.map(\.status) == [.accepted, .arrivedAtStore])
        try daemon.stop()
    }

    @Test("logout clears the route, names, phones and uploaded photos, keeps unsent changes; the next login sends them")
    func logout() async throws {
        let rig = try WorkflowTests.Rig()
        let client = try rig.daemon.client(timeout: .seconds(60))
        // An uploaded photo (task-1002 is proved by photo).
        for action in ["accept", "arrive", "pickup"] { try rig.ctl(action, "--task", "task-1002") }
        let photo = rig.daemon.directory.file("handover.png")
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 2000)).write(to: URL(fileURLWithPath: photo))
        try rig.ctl("pod", "photo", photo, "--task", "task-1002")
        _ = try await rig.http.request(.POST, "/sim/messages", json: ["driverId": "drv-1", "taskId": "task-1001", "text": "leave it at the door"])
        try rig.waitFor("the message kept") { try client.call(Methods.eventsPending, NoParams()).pending >= 1 }
        _ = try Harness.drain(rig.daemon)
        let spool = rig.daemon.directory.file("state/spool")
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool).count == 1)
        // Offline: two changes wait.
        try await rig.cutNetwork()
        try rig.ctl("accept", "--task", "task-1001")
        try rig.ctl("arrive", "--task", "task-1002")
        let result = try client.call(Methods.authLogout, NoParams())
        #expect(result.keptItems == 2 && result.removedTasks == 2 && result.removedPhotos == 1, "\(result)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool).isEmpty)
        let route = try rig.route()
        #expect(route.stops.isEmpty && route.tasks.isEmpty)
        #expect(try rig.ctl("next").stdout.contains("No stops left"))
        // Names, phones and messages are gone from the database and its log too, free pages included (deleted rows
        // are zeroed only where a page is written anyway; logout rebuilds the file and empties the log).
        for file in ["driverd.sqlite", "driverd.sqlite-wal"] {
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: rig.daemon.directory.file("state/" + file)))) ?? Data()
            for secret in ["A. Customer", "B. Customer", "+49 151", "Dachauplatz", "leave it at the door"] {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) in \(file) after logout")
            }
        }
        try await rig.restoreNetwork()
        let paused = try client.call(Methods.outboxFlush, NoParams())
        #expect(paused.transitions == 2 && paused.link == .authRequired)
        let login = try runProgram(
            Binaries.path("driverctl"), ["login", "--username", "rider1"], environment: ["DRIVERD_SOCKET": rig.daemon.socketPath],
            stdin: "demo-password\n")
        #expect(login.status == 0, "\(login.stderr)")
        _ = try Harness.drain(rig.daemon)
        let stats = try await rig.stats()
        #expect(rig.statuses(stats, "task-1001") == [.accepted])
        #expect(rig.statuses(stats, "task-1002") == [.accepted, .arrivedAtStore, .pickedUp, .arrivedAtDestination])
        try rig.waitFor("the route back after the login") { try rig.route().stops.count == 3 }
        try rig.daemon.stop()
    }
}
