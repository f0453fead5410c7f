import BackendContract
import DispatchSimCore
import DriverAPI
import DriverDomain
import DriverStore
import Foundation
import JSONRPC
import NMEASynth
import SQLiteKit
import Testing

/// A unit driving against its own dispatch-sim, once a batch has gone over the WebSocket.
struct SocketDrive {
    let sim: SimProcess
    let http: SimHTTP
    let directory = TemporaryDirectory()
    let fake: GPSFake
    let daemon: DaemonProcess

    init(laps: Int, delay: Double) async throws {
        sim = try SimProcess()
        http = SimHTTP(base: sim.base)
        let log = directory.file("drive.nmea")
        try NMEAWriter.log(RoutePresets.driving(laps: laps)).write(toFile: log, atomically: true, encoding: .utf8)
        fake = try GPSFake(log: log, delay: delay)
        daemon = try DaemonProcess(arguments: ["--gpsd", fake.endpoint], config: Harness.config(backend: sim), directory: directory)
        let (http, daemon) = (http, daemon)
        try await waitUntil("a batch over the WebSocket") {
            let batches = try await http.request(.GET, "/sim/stats").decode(SimStats.self).webSocketBatches
            return try Harness.outbox(daemon).transport == .websocket && batches >= 1
        }
    }

    func stats() async throws -> SimStats { try await http.request(.GET, "/sim/stats").decode(SimStats.self) }
}

/// driverd's outbox and uplink against the real reference backend over loopback.
@Suite("Uplink to dispatch-sim", .ownThread)
struct UplinkTests {
    @Test("every recorded ping reaches the backend exactly once through dropped requests, lost answers, 5xx and closed WebSockets")
    func pingsExactlyOnce() async throws {
        let sim = try SimProcess(arguments: ["--seed", "7"])
        let http = SimHTTP(base: sim.base)
        _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(dropBeforeRate: 0.2, dropAfterRate: 0.2, errorRate: 0.2))
        let directory = TemporaryDirectory()
        let drive = directory.file("drive.nmea")
        try NMEAWriter.log(RoutePresets.driving(laps: 3)).write(toFile: drive, atomically: true, encoding: .utf8)
        let fake = try GPSFake(log: drive, delay: 0.01)
        let daemon = try DaemonProcess(arguments: ["--gpsd", fake.endpoint], config: Harness.config(backend: sim), directory: directory)
        // The backend also closes the WebSocket now and then.
        let closer = Task {
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(1.5))
                _ = try await http.request(.POST, "/sim/websockets/close")
            }
        }
        let gps = try Harness.settled(daemon, fake: fake, minimumFixes: 50)
        closer.cancel()
        _ = try await http.request(.DELETE, "/sim/faults")
        let status = try Harness.drain(daemon)
        #expect(status.link == .online && status.driverId == "drv-1")
        let stats = try await http.request(.GET, "/sim/stats").decode(SimStats.self)
        #expect(gps.pingsRecorded > 50)
        #expect(stats.uniquePings == gps.pingsRecorded, "recorded \(gps.pingsRecorded), backend has \(stats.uniquePings)")
        #expect(stats.faultsInjected > 0)
        try daemon.stop()
    }

    @Test("batches go over the WebSocket while it is open; while the backend refuses it, HTTPS carries them; it reconnects; pushes arrive; none lost")
    func webSocketTransport() async throws {
        // Far longer than the three phases need (it is cut short below): once the log ends no ping is left to
        // go over the reconnected WebSocket, and under a full suite the phases and the reconnect's backoff (full
        // jitter, doubling) have outlasted a shorter drive.
        let drive = try await SocketDrive(laps: 40, delay: 0.03)
        let (http, fake, daemon) = (drive.http, drive.fake, drive.daemon)
        func stats() async throws -> SimStats { try await drive.stats() }
        // Open: batches go over the WebSocket, and a push comes down it.
        _ = try await http.request(.POST, "/sim/messages", json: ["driverId": "drv-1", "text": "gate code 1234"])
        try waitUntil("the push") { daemon.log.contains("push from the backend") }

        // Refused: the backend closes the WebSocket and answers 503 to every reconnect; HTTPS carries the batches.
        _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(errorRate: 1, pathPrefix: "/api/v1/rider/ws"))
        _ = try await http.request(.POST, "/sim/websockets/close")
        try waitUntil("the fallback to HTTPS") { try Harness.outbox(daemon).transport == .https }
        let before = try await stats()
        try await waitUntil("a batch over HTTPS") {
            let now = try await stats()
            return now.batches - now.webSocketBatches > before.batches - before.webSocketBatches
        }
        #expect(try await stats().webSocketBatches == before.webSocketBatches, "no batch over a refused WebSocket")

        // Allowed again: it reconnects and the batches go over the WebSocket again.
        _ = try await http.request(.DELETE, "/sim/faults")
        let refused = try await stats()
        // The reconnect waits out the backoff the refusals built up (full jitter, doubling): longer on a loaded machine.
        try await waitUntil("the reconnect and a batch over it", timeout: .seconds(180)) {
            let batches = try await stats().webSocketBatches
            return try Harness.outbox(daemon).transport == .websocket && batches > refused.webSocketBatches
        }

        // The drive is cut short here; every ping recorded until then reaches the backend exactly once.
        fake.kill()
        let gps = try Harness.waitFor(daemon) { ($0.lastFixAge ?? 0) > 3 && $0.pingsPending == 0 }.0
        _ = try Harness.drain(daemon)
        let final = try await stats()
        #expect(final.uniquePings == gps.pingsRecorded, "recorded \(gps.pingsRecorded), backend has \(final.uniquePings)")
        try daemon.stop()
    }

    @Test("a frame lost on the WebSocket makes the link lossy: batches go by HTTPS while the reopened socket only listens; a lost batch rides with the next request under its own id, stored once; none lost")
    func lossyLinkListens() async throws {
        // A few times real time, for as long as the phases may take on a loaded machine (cut short below).
        let drive = try await SocketDrive(laps: 10, delay: 0.1)
        let (http, fake, daemon) = (drive.http, drive.fake, drive.daemon)
        func stats() async throws -> SimStats { try await drive.stats() }
        // The link loses the socket's next frame: the socket closes with a batch unacked.
        _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(dropBeforeRate: 1, limit: 1, pathPrefix: "/api/v1/rider/ws"))
        try await waitUntil("the frame lost") { try await stats().faultsInjected == 1 }
        // The socket opens again (pushes come down it), but batches go by HTTPS.
        try await waitUntil("the socket open again, batches by HTTPS") {
            let sockets = try await stats().webSockets
            return try sockets == 1 && Harness.outbox(daemon).transport == .https
        }
        let reopened = try await stats()
        try await waitUntil("three batches by HTTPS") {
            let now = try await stats()
            return now.batches - now.webSocketBatches >= reopened.batches - reopened.webSocketBatches + 3
        }
        let later = try await stats()
        #expect(later.webSocketBatches == reopened.webSocketBatches, "no batch over the socket within 2 minutes of a loss")
        #expect(later.webSockets == 1, "the socket stays open")
        // The batch lost with the frame rode with the next request under its own id: two batches stored in one instant.
        #expect(zip(later.batchLog, later.batchLog.dropFirst()).contains { $0.time == $1.time }, "the lost batch carried by the next request")
        // A request lost after the backend stored it: the next request carries it again (a duplicate), none of its own.
        func locationRequests(_ stats: SimStats) -> Int { stats.requestsByRoute[BackendPaths.locations, default: 0] }
        let beforeLoss = try await stats()
        _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(dropAfterRate: 1, limit: 1, pathPrefix: BackendPaths.locations))
        try await waitUntil("an answer lost, then three batches") {
            let now = try await stats()
            return now.faultsInjected > beforeLoss.faultsInjected && now.batches >= beforeLoss.batches + 3
        }
        let afterLoss = try await stats()
        #expect(afterLoss.duplicateBatches == beforeLoss.duplicateBatches + 1, "the stored batch came again, carried")
        // Sent alone, the lost batch would make one request more than the batches stored; carried, none (or fewer, when
        // pings a window wrote to disk meanwhile ride as a batch of their own).
        #expect(locationRequests(afterLoss) - locationRequests(beforeLoss) <= afterLoss.batches - beforeLoss.batches,
                "no request more than the batches stored: the lost one cost none of its own")
        _ = try await http.request(.POST, "/sim/messages", json: ["driverId": "drv-1", "text": "gate code 1234"])
        try waitUntil("the push over the listening socket") { daemon.log.contains("CUSTOMER_MESSAGE") }
        #expect(try await stats().requestsByRoute["/api/v1/rider/pushes", default: 0] == reopened.requestsByRoute["/api/v1/rider/pushes", default: 0],
                "no push polled while the socket listens")
        fake.kill()
        let gps = try Harness.waitFor(daemon) { ($0.lastFixAge ?? 0) > 3 && $0.pingsPending == 0 }.0
        _ = try Harness.drain(daemon)
        let final = try await stats()
        #expect(final.uniquePings == gps.pingsRecorded, "recorded \(gps.pingsRecorded), backend has \(final.uniquePings)")
        #expect(final.duplicateBatches <= 1, "at most the lost frame's batch again")
        try daemon.stop()
    }

    @Test("queued transitions go in order per task, each exactly once through faults; a refused one is dead-lettered", .tags(.long))
    func transitionsInOrder() async throws {
        let sim = try SimProcess(arguments: ["--seed", "11"])
        let http = SimHTTP(base: sim.base)
        let directory = TemporaryDirectory()
        // Queue a shift's transitions before the daemon starts, as driver actions would have.
        try Self.queueJourney(in: directory.file("state"))
        _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(dropBeforeRate: 0.25, dropAfterRate: 0.25, errorRate: 0.2))
        // Seven requests in ten fail: the backoff climbs towards its cap (the shortest allowed here, so the test is
        // about order and exactly-once, not about waiting).
        let config = Harness.config(backend: sim) + "[uplink]\nretry_cap_seconds = 30\n"
        let daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: config, directory: directory)
        // Half the queue goes through the faults before they are lifted. Usually within 80 s; a run of failures (one
        // request in two fails) holds each retry up to the 30-s cap, and once took more than 150 s.
        try await waitUntil("half the transitions through faults", timeout: .seconds(300), detail: daemon.log) {
            let stats = try await http.request(.GET, "/sim/stats").decode(SimStats.self)
            return stats.faultsInjected > 0 && stats.statusUpdates.count >= 4
        }
        _ = try await http.request(.DELETE, "/sim/faults")
        let status = try Harness.drain(daemon)
        #expect(status.deadLetters == 1)
        let stats = try await http.request(.GET, "/sim/stats").decode(SimStats.self)
        #expect(stats.faultsInjected > 0)
        try Self.checkJourney(stats, state: directory.file("state"))
        try daemon.stop()
    }

    @Test("a backend that says \"not now\" (429 with Retry-After: 3, twice): nothing is refused, and nothing goes again before the backend's wait is over")
    func notNow() async throws {
        let sim = try SimProcess(arguments: ["--seed", "11"])
        let http = SimHTTP(base: sim.base)
        let directory = TemporaryDirectory()
        try Self.queueJourney(in: directory.file("state"))
        _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(
            errorRate: 1, errorStatus: 429, retryAfter: "3", limit: 2, pathPrefix: "/api/v1/rider/tasks/task-1001/status"))
        let started = Date().timeIntervalSince1970
        let daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: Harness.config(backend: sim), directory: directory)
        let status = try Harness.drain(daemon)
        #expect(status.deadLetters == 1)
        let stats = try await http.request(.GET, "/sim/stats").decode(SimStats.self)
        #expect(stats.faultsInjected == 2)
        try Self.checkJourney(stats, state: directory.file("state"))
        // Two answers of "3 s" for task-1001's transitions: its first reaches the backend no sooner than 6 s after the
        // start (task-1002's, never refused, need not wait).
        let first = try #require(stats.statusUpdates.filter { $0.taskId == "task-1001" }.map(\.time).min())
        #expect(first - started >= 6, "task-1001's first transition came \(first - started) s after the start")
        #expect(daemon.log.contains("HTTP 429") && daemon.log.contains("retry after 3 s"), "\(daemon.log.suffix(2000))")
        try daemon.stop()
    }

    @Test("a Retry-After given as a date 8 s after the backend's own Date, heard by a unit whose clock runs 2 days fast: the unit waits those 8 s (its own clock would have said: at once)")
    func notNowUntilADate() async throws {
        let sim = try SimProcess(arguments: ["--seed", "11"])
        let http = SimHTTP(base: sim.base)
        let directory = TemporaryDirectory()
        try Self.queueJourney(in: directory.file("state"))
        let started = Date().timeIntervalSince1970
        _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(
            errorRate: 1, errorStatus: 429, retryAfter: RetryAfter.imfFixdate(Int(started) + 9), limit: 1,
            pathPrefix: "/api/v1/rider/tasks/task-1001/status"))
        let daemon = try DaemonProcess(
            arguments: ["--gpsd", "127.0.0.1:1"], environment: try ClockTests.faked(["FAKETIME": "+2d"]), config: Harness.config(backend: sim),
            directory: directory)
        let status = try Harness.drain(daemon)
        #expect(status.deadLetters == 1)
        let stats = try await http.request(.GET, "/sim/stats").decode(SimStats.self)
        #expect(stats.faultsInjected == 1)
        try Self.checkJourney(stats, state: directory.file("state"))
        let first = try #require(stats.statusUpdates.filter { $0.taskId == "task-1001" }.map(\.time).min())
        #expect(first - started >= 7 && first - started < 60, "task-1001's first transition came \(first - started) s after the start")
        try daemon.stop()
    }

    @Test("a backend that answers every rider call 429 with Retry-After: 8: once heard, nothing knocks again before the wait is over, neither the route sync nor the WebSocket nor the sender")
    func quietMeansQuiet() async throws {
        let sim = try SimProcess(arguments: ["--seed", "11"])
        let http = SimHTTP(base: sim.base)
        _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(errorRate: 1, errorStatus: 429, retryAfter: "8", pathPrefix: "/api/v1/rider/"))
        let daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: Harness.config(backend: sim), directory: TemporaryDirectory())
        func faults() async throws -> Int { try await http.request(.GET, "/sim/stats").decode(SimStats.self).faultsInjected }
        try await waitUntil("the first 429", detail: daemon.log) { try await faults() > 0 }
        // The calls already on their way when the first answer came may meet it too; then silence.
        try await Task.sleep(for: .seconds(2))
        let heard = try await faults()
        try await Task.sleep(for: .seconds(4))
        let after = try await faults()
        #expect(after == heard, "\(after - heard) more calls inside the backend's 8 s (\(heard) before)")
        #expect(daemon.log.contains("retry after 8 s"), "\(daemon.log.suffix(2000))")
        try daemon.stop()
    }

    @Test("the WebSocket's upgrade answered 429 with Retry-After: 6: the socket opens again no sooner than the backend's 6 s, and the journal says why")
    func notNowOnTheUpgrade() async throws {
        let sim = try SimProcess(arguments: ["--seed", "11"])
        let http = SimHTTP(base: sim.base)
        _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(
            errorRate: 1, errorStatus: 429, retryAfter: "6", limit: 1, pathPrefix: BackendPaths.webSocket))
        let daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: Harness.config(backend: sim), directory: TemporaryDirectory())
        func stats() async throws -> SimStats { try await http.request(.GET, "/sim/stats").decode(SimStats.self) }
        try await waitUntil("the upgrade refused", detail: daemon.log) { try await stats().faultsInjected == 1 }
        // Read after the refusal (polled every 100 ms): the wait measured here is at most the real one.
        let refused = ContinuousClock.now
        try await waitUntil("the WebSocket open after the backend's wait", detail: daemon.log) { try await stats().webSockets == 1 }
        let waited = ContinuousClock.now - refused
        // Before the upgrade's answer was read, the socket came back after its own backoff, 1 to 3 s.
        #expect(waited >= .seconds(5.8), "the WebSocket opened \(waited) after its upgrade was refused for 6 s")
        #expect(daemon.log.contains("WebSocket upgrade refused: HTTP 429") && daemon.log.contains("retry after 6 s"), "\(daemon.log.suffix(2000))")
        try daemon.stop()
    }

    /// A shift's transitions, queued before the daemon starts as driver actions would have queued them: seven
    /// the backend takes and one it refuses (DELIVERED without a proof of delivery).
    static func queueJourney(in state: String) throws {
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let outbox = Outbox(store: try Store(directory: state))
        let journey: [(String, TaskStatus)] = [
            ("task-1001", .accepted), ("task-1002", .accepted), ("task-1001", .arrivedAtStore), ("task-1001", .pickedUp),
            ("task-1002", .arrivedAtStore), ("task-1002", .pickedUp), ("task-1001", .arrivedAtDestination), ("task-1001", .delivered),
        ]
        for (index, (task, status)) in journey.enumerated() {
            let body = try JSONEncoder().encode(StatusUpdateRequest(status: status, location: Location(lat: 49.02, lng: 12.09), timestamp: 1_795_000_000 + Double(index)))
            try outbox.enqueue(OutboxItemRecord(kind: .status, taskId: task, idempotencyKey: "key-\(index)", payload: body, createdAt: Double(index)))
        }
    }

    /// Every accepted transition exactly once, in order per task; the refused one dead-lettered with the answer.
    static func checkJourney(_ stats: SimStats, state: String, _ comment: String = "") throws {
        let applied = stats.statusUpdates.map(\.idempotencyKey)
        #expect(Set(applied) == Set((0..<7).map { "key-\($0)" }) && applied.count == 7, "\(applied) \(comment)")
        for task in ["task-1001", "task-1002"] {
            let keys = stats.statusUpdates.filter { $0.taskId == task }.map { Int($0.idempotencyKey.dropFirst(4))! }
            #expect(keys == keys.sorted(), "\(task) out of order: \(keys) \(comment)")
        }
        let dead = try Outbox(store: try Store(directory: state)).deadItems()
        #expect(
            dead.map(\.idempotencyKey) == ["key-7"] && dead.first?.backendAnswer?.contains("POD_REQUIRED") == true,
            "\(dead.map { ($0.idempotencyKey, $0.backendAnswer ?? "") }) \(comment)")
    }

    @Test("kill -9 at random points of a faulty shift, 20 times: every transition once and in order; a ping lost only inside its commit window", .tags(.long))
    func crashes() async throws {
        let seed = ProcessInfo.processInfo.environment["DRIVERD_CRASH_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...999_999)
        print("crash test seed: \(seed) (DRIVERD_CRASH_SEED=\(seed) replays it)")
        var random = SplitMix64(seed: seed)
        let sim = try SimProcess(arguments: ["--seed", String(seed)])
        let http = SimHTTP(base: sim.base)
        _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(dropBeforeRate: 0.15, dropAfterRate: 0.15, errorRate: 0.15))
        let directory = TemporaryDirectory()
        try Self.queueJourney(in: directory.file("state"))
        let drive = directory.file("drive.nmea")
        try NMEAWriter.log(RoutePresets.driving(laps: 12)).write(toFile: drive, atomically: true, encoding: .utf8)
        let fake = try GPSFake(log: drive, delay: 0.01)
        // Each ping recorded is a debug line: the pings lost are counted against the kills that lost them.
        let config = Harness.config(backend: sim) + "[daemon]\nlog_level = \"debug\"\n"
        var lives: [PingAccounting.Life] = []
        for _ in 0..<20 {
            let daemon = try DaemonProcess(arguments: ["--gpsd", fake.endpoint], config: config, directory: directory)
            usleep(UInt32(Double.random(in: 0.2...1.2, using: &random) * 1e6))
            try daemon.stop(signal: SIGKILL)
            lives.append(PingAccounting.Life(log: daemon.log, endedAt: PingAccounting.monotonic()))
        }
        let daemon = try DaemonProcess(arguments: ["--gpsd", fake.endpoint], config: config, directory: directory)
        _ = try Harness.settled(daemon, fake: fake, minimumFixes: 1)
        _ = try await http.request(.DELETE, "/sim/faults")
        _ = try Harness.drain(daemon, timeout: .seconds(120))
        try daemon.stop()
        lives.append(PingAccounting.Life(log: daemon.log, endedAt: nil))
        let stats = try await http.request(.GET, "/sim/stats").decode(SimStats.self)
        try Self.checkJourney(stats, state: directory.file("state"), "(seed \(seed))")
        // Only pings recorded within a commit window before a kill may be missing; the rest reached the backend.
        let pings = PingAccounting.account(lives, received: try await SimHTTP(base: sim.base).locations())
        #expect(pings.recorded > 100, "seed \(seed)")
        #expect(pings.outsideWindow.isEmpty, "\(pings.outsideWindow.prefix(10)) (seed \(seed))")
        #expect(stats.uniquePings == pings.recorded - pings.lost, "backend \(stats.uniquePings), recorded \(pings.recorded), lost \(pings.lost) (seed \(seed))")
        #expect(stats.faultsInjected > 0)
    }

    @Test("login: driverctl login stores a 0600 token; a revoked token pauses the uplink with auth.required until the next login")
    func login() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let directory = TemporaryDirectory()
        let daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: Harness.config(backend: sim, credentials: false), directory: directory)
        #expect(try Harness.outbox(daemon).driverId == nil)
        let ctl = Binaries.path("driverctl")
        let wrong = try runProgram(ctl, ["--socket", daemon.socketPath, "login", "--username", "rider1"], stdin: "nope\n")
        #expect(wrong.status != 0 && wrong.stderr.contains("refused"))
        let ok = try runProgram(ctl, ["--socket", daemon.socketPath, "login", "--username", "rider1"], stdin: "demo-password\n")
        #expect(ok.status == 0 && ok.stdout.contains("logged in as drv-1"), "\(ok.stderr)")
        var info = stat()
        #expect(stat(directory.file("state") + "/tokens.json", &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(!(try String(contentsOfFile: directory.file("state") + "/tokens.json", encoding: .utf8)).contains("demo-password"))

        // Subscribe, revoke every token on the backend, queue something: the uplink stops and says why.
        let events = try daemon.client(timeout: .seconds(30))
        _ = try events.call(Methods.eventsSubscribe, SubscribeParams(topics: [Events.authRequired.topic, Events.outboxRefused.topic]))
        _ = try await http.request(.POST, "/sim/tokens/revoke", json: ["driverId": "drv-1"])
        try Outbox(store: try Store(directory: directory.file("state"))).enqueue(OutboxItemRecord(
            kind: .status, taskId: "task-1001", idempotencyKey: "after-revoke",
            payload: try JSONEncoder().encode(StatusUpdateRequest(status: .accepted, location: nil, timestamp: 1)), createdAt: 1))
        let flushed = try daemon.client(timeout: .seconds(60)).call(Methods.outboxFlush, NoParams())
        #expect(flushed.link == .authRequired && flushed.transitions == 1)
        let notification = String(decoding: try events.readLine(), as: UTF8.self)
        #expect(notification.contains(#""method":"auth.required""#))

        let again = try runProgram(ctl, ["--socket", daemon.socketPath, "login", "--username", "rider1"], stdin: "demo-password\n")
        #expect(again.status == 0)
        let status = try Harness.drain(daemon)
        #expect(status.link == .online)
        #expect(try await http.request(.GET, "/sim/stats").decode(SimStats.self).statusUpdates.map(\.idempotencyKey) == ["after-revoke"])
        let queue = try runProgram(ctl, ["--socket", daemon.socketPath, "queue"])
        #expect(queue.stdout.contains("online") && queue.stdout.contains("0 transitions"))

        // A transition the backend refuses: dead-lettered, and front ends hear of it.
        try Outbox(store: try Store(directory: directory.file("state"))).enqueue(OutboxItemRecord(
            kind: .status, taskId: "task-1002", idempotencyKey: "skips-ahead",
            payload: try JSONEncoder().encode(StatusUpdateRequest(status: .delivered, location: nil, timestamp: 2)), createdAt: 2))
        #expect(try Harness.drain(daemon).deadLetters == 1)
        var refused = ""
        for _ in 0..<5 where !refused.contains("outbox.refused") { refused = String(decoding: try events.readLine(), as: UTF8.self) }
        #expect(refused.contains(#""idempotencyKey":"skips-ahead""#) && refused.contains("INVALID_TRANSITION"), "\(refused)")
        try daemon.stop()
    }

    /// A task as `POST /sim/tasks` takes it (a scenario task).
    static func task(id: String, driverId: String) -> Scenario.Task {
        let place = Scenario.Place(address: "Am Hafen 1", lat: 49.02, lng: 12.1, name: "Depot", phone: "+49 941 1")
        return Scenario.Task(id: id, driverId: driverId, pickup: place, dropoff: place, podType: .photo)
    }

    @Test("another driver logs in on the same unit: the WebSocket opens again with their token, so their pings and pushes are theirs; their profile's language is shown")
    func driverChange() async throws {
        let directory = TemporaryDirectory()
        let scenario = directory.file("scenario.json")
        try """
        {"drivers": [{"id": "drv-1", "username": "rider1", "password": "demo-password"},
                     {"id": "drv-2", "username": "rider2", "password": "demo-password", "language": "de"}],
         "tasks": []}
        """.write(toFile: scenario, atomically: true, encoding: .utf8)
        let sim = try SimProcess(arguments: ["--scenario", scenario])
        let http = SimHTTP(base: sim.base)
        let drive = directory.file("drive.nmea")
        try NMEAWriter.log(RoutePresets.driving(laps: 40)).write(toFile: drive, atomically: true, encoding: .utf8)
        let fake = try GPSFake(log: drive, delay: 0.03)
        let daemon = try DaemonProcess(arguments: ["--gpsd", fake.endpoint], config: Harness.config(backend: sim), directory: directory)
        try await waitUntil("drv-1's pings over the WebSocket", detail: daemon.log) {
            let pings = try await http.locations("drv-1").pings
            return try Harness.outbox(daemon).transport == .websocket && !pings.isEmpty
        }
        #expect(try Harness.outbox(daemon).driverLanguage == nil)
        // drv-1's pushes reach 2 (each driver's are numbered on their own).
        for text in ["first for drv-1", "second for drv-1"] {
            _ = try await http.request(.POST, "/sim/messages", json: ["driverId": "drv-1", "text": text])
        }
        try waitUntil("drv-1's two messages", detail: daemon.log) { try daemon.client().call(Methods.eventsPending, NoParams()).pending == 2 }

        let login = try daemon.client().call(Methods.authLogin, LoginParams(username: "rider2", password: "demo-password"))
        #expect(login.driverId == "drv-2")
        let status = try Harness.outbox(daemon)
        #expect(status.driverId == "drv-2" && status.driverLanguage == "de", "\(status)")
        // drv-1's messages went with their login, as at a logout.
        #expect(try daemon.client().call(Methods.eventsPending, NoParams()).pending == 0)
        // From a moment after the login on, every batch is drv-2's, over a WebSocket opened with drv-2's token.
        try await waitUntil("drv-2's pings over the WebSocket", detail: daemon.log) {
            let pings = try await http.locations("drv-2").pings
            return try Harness.outbox(daemon).transport == .websocket && !pings.isEmpty
        }
        try await Task.sleep(for: .seconds(2))
        let settled = try await http.locations("drv-1").pings.count
        try await Task.sleep(for: .seconds(6))
        #expect(try await http.locations("drv-1").pings.count == settled, "drv-1 still receives pings after drv-2 logged in")
        // drv-2's first push (id 1, below drv-1's 2) reaches the unit; a new order for drv-1 does not.
        _ = try await http.request(.POST, "/sim/tasks", json: Self.task(id: "order-1-late", driverId: "drv-1"))
        _ = try await http.request(.POST, "/sim/messages", json: ["driverId": "drv-2", "text": "for drv-2"])
        try waitUntil("drv-2's message", detail: daemon.log) { try daemon.client().call(Methods.eventsPending, NoParams()).pending == 1 }
        try await Task.sleep(for: .seconds(3))
        #expect(!daemon.log.contains("kind=TASK_ASSIGNED"), "drv-1's order reached the unit after drv-2 logged in")
        #expect(try daemon.client().call(Methods.eventsPending, NoParams()).pending == 1)
        fake.kill()
        try daemon.stop()
    }

    /// Hours of the offline backlog: 2 in `make test` (7,200 pings, a minute of replay), a whole shift (8 h, 28,800
    /// pings, four minutes) in `make soak`, which sets `DRIVERD_BACKLOG_HOURS=8`.
    static let backlogHours = ProcessInfo.processInfo.environment["DRIVERD_BACKLOG_HOURS"].flatMap { Int($0) } ?? 2

    @Test("hours offline at 1 Hz (a whole shift in make soak): the backlog waits in SQLite; when the backend returns, the live position goes first, then the backlog oldest first", .tags(.long))
    func offlineBacklog() async throws {
        let port = GPSFake.freePort()
        let directory = TemporaryDirectory()
        let seconds = Self.backlogHours * 3600
        // Held until driverd connects: a loaded machine's driverd once recorded 21,969 of 8 h's 28,800 (it connected
        // after the replay began), and another 22,377, with the replay ended mid-log by a pause in the fixes or
        // with what gpsd dropped for a reader that fell behind (at 0.2 ms a sentence, up to 2,500 epochs a second).
        // At 1 ms, 500 at most.
        let log = directory.file("parked-\(Self.backlogHours)h.nmea")
        try NMEAWriter.log(RoutePresets.parked(seconds: seconds)).write(toFile: log, atomically: true, encoding: .utf8)
        let fake = try GPSFake(log: log, delay: 0.001, leadIn: .seconds(2))
        // Every fix recorded (1 Hz even when parked), the backend away: nothing listens on its port yet.
        let config = """
            [gps]
            watch = "continuous"
            [sampling]
            stationary_hz = 1.0
            [backend]
            url = "http://127.0.0.1:\(port)"
            username = "rider1"
            password = "demo-password"
            """
        let daemon = try DaemonProcess(arguments: ["--gpsd", fake.endpoint], config: config, directory: directory)
        try Harness.play(fake, to: daemon)
        let gps = try Harness.settled(daemon, fake: fake, minimumFixes: seconds * 7 / 10, timeout: .seconds(600))
        let offline = try Harness.outbox(daemon)
        #expect(offline.pings == gps.pingsRecorded && offline.pings > seconds * 87 / 100, "\(offline) recorded \(gps.pingsRecorded)")
        #expect(offline.link == .backingOff || offline.link == .idle)

        let sim = try SimProcess(port: port)
        let status = try Harness.drain(daemon, timeout: .seconds(300))
        #expect(status.link == .online && status.pings == 0)
        let stats = try await SimHTTP(base: sim.base).request(.GET, "/sim/stats").decode(SimStats.self)
        #expect(stats.uniquePings == gps.pingsRecorded)
        let newest = try #require(stats.batchLog.map(\.newest).max())
        // The first batch carries the live position; after it, the backlog goes oldest first.
        #expect(stats.batchLog.first?.newest == newest)
        let backlogStarts = stats.batchLog.dropFirst().map(\.oldest)
        #expect(backlogStarts == backlogStarts.sorted())
        try daemon.stop()
    }

    @Test("without a backend the outbox says so and keeps everything")
    func noBackend() throws {
        let daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"])
        let status = try Harness.outbox(daemon)
        #expect(!status.enabled && status.link == .disabled)
        #expect(throws: (any Error).self) { try daemon.client().call(Methods.outboxFlush, NoParams()) }
        let queue = try runProgram(Binaries.path("driverctl"), ["--socket", daemon.socketPath, "queue"])
        #expect(queue.stdout.contains("no backend configured"))
        try daemon.stop()
    }
}
