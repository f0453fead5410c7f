import DriverAPI
import BackendContract
import DispatchSimCore
import DriverDomain
import Foundation
import Testing

@Suite("Reference backend rules")
struct SimWorldTests {
    func world() -> SimWorld { SimWorld(scenario: .builtIn) }

    func update(
        _ world: inout SimWorld, _ taskId: String, _ status: TaskStatus, key: String, digest: String? = nil, driver: String = "drv-1", at now: Double = 0
    ) -> (outcome: StatusOutcome, replayed: Bool) {
        world.updateStatus(
            taskId: taskId, driverId: driver, request: StatusUpdateRequest(status: status, location: nil, timestamp: now),
            idempotencyKey: key, bodyDigest: digest ?? "\(taskId)|\(status.rawValue)", now: now)
    }

    func accepted(_ taskId: String, _ status: TaskStatus, from previous: TaskStatus, key: String, at now: Double = 0) -> StatusOutcome {
        .applied(StatusAccepted(taskId: taskId, status: status, previousStatus: previous, idempotencyKey: key, acceptedAt: now))
    }

    @Test("the built-in world has a driver with two active tasks in a multi-order sequence, and round-trips through JSON")
    func builtIn() throws {
        let active = world().activeTasks(driverId: "drv-1", now: 5)
        #expect(active.tasks.map(\.id) == ["task-1001", "task-1002"])
        #expect(active.sequence == ["task-1001-pickup", "task-1002-pickup", "task-1001-dropoff", "task-1002-dropoff"])
        #expect(active.tasks[0].stops.map(\.kind) == [.pickup, .dropoff])
        let line = try #require(Polyline.decode(active.tasks[0].polyline))
        #expect(line == [Polyline.Point(lat: 49.021, lng: 12.097), Polyline.Point(lat: 49.016, lng: 12.1005)])
        #expect(Scenario.builtIn.problems().isEmpty)
        let data = try JSONEncoder().encode(Scenario.builtIn)
        #expect(try JSONDecoder().decode(Scenario.self, from: data) == .builtIn)
    }

    @Test("a scenario file needs only drivers and tasks; problems are named")
    func scenarioFile() throws {
        let json = #"{"drivers":[{"id":"d","username":"u","password":"p"},{"id":"e","username":"v","password":"p","language":"pt-BR"},{"id":"f","username":"w","password":"p","language":"Portuguese"}],"tasks":[{"id":"t 1","driverId":"x","pickup":{"address":"a","lat":1,"lng":2,"name":"n","phone":"p"},"dropoff":{"address":"b","lat":95,"lng":2,"name":"n","phone":"p"},"podType":"OTP"}]}"#
        let scenario = try JSONDecoder().decode(Scenario.self, from: Data(json.utf8))
        #expect(scenario.etaSpeed == 8 && scenario.otpAttempts == 3 && scenario.tasks[0].status == .assigned)
        let problems = scenario.problems()
        #expect(problems.contains { $0.contains("t 1") && $0.contains("letters") })
        #expect(problems.contains { $0.contains("unknown driver x") })
        #expect(problems.contains { $0.contains("4-digit otp") })
        #expect(problems.contains { $0.contains("out of range") })
        #expect(scenario.drivers.map(\.language) == [nil, "pt-BR", "Portuguese"])
        #expect(problems.filter { $0.contains("language") } == [#"driver f: language must be a BCP 47 tag such as "pt" or "pt-BR""#])
    }

    @Test("idempotency: a replayed key returns the first answer and changes nothing; another body is refused")
    func idempotency() {
        var world = world()
        let first = update(&world, "task-1001", .accepted, key: "k1", at: 1)
        #expect(first.outcome == accepted("task-1001", .accepted, from: .assigned, key: "k1", at: 1) && !first.replayed)
        let replay = update(&world, "task-1001", .accepted, key: "k1", at: 2)
        #expect(replay.outcome == first.outcome && replay.replayed)
        #expect(update(&world, "task-1001", .arrivedAtStore, key: "k1", at: 3).outcome == .keyReused)
        #expect(world.stats.statusUpdates.count == 1)
        #expect(world.stats.duplicateRequests == 1)
        #expect(world.tasks["task-1001"]?.task.status == .accepted)
    }

    @Test("an invalid transition is refused with the server's task, and the refusal is the key's answer; DELIVERED needs an accepted POD")
    func transitions() {
        var world = world()
        guard case .invalidTransition(let task) = update(&world, "task-1001", .pickedUp, key: "x").outcome else {
            Issue.record("expected a refusal")
            return
        }
        #expect(task.status == .assigned)
        for (key, status, previous) in [("1", TaskStatus.accepted, TaskStatus.assigned), ("2", .arrivedAtStore, .accepted), ("3", .pickedUp, .arrivedAtStore)] {
            #expect(update(&world, "task-1001", status, key: key).outcome == accepted("task-1001", status, from: previous, key: key))
        }
        // The refused key is answered the same way even though the state now allows it.
        let replayedRefusal = update(&world, "task-1001", .pickedUp, key: "x")
        #expect(replayedRefusal.replayed)
        if case .invalidTransition(let task) = replayedRefusal.outcome { #expect(task.status == .assigned) } else { Issue.record("expected the first refusal") }
        #expect(update(&world, "task-1001", .arrivedAtDestination, key: "4").outcome == accepted("task-1001", .arrivedAtDestination, from: .pickedUp, key: "4"))
        guard case .podRequired = update(&world, "task-1001", .delivered, key: "5").outcome else {
            Issue.record("expected POD_REQUIRED")
            return
        }
        #expect(world.submitOTP(taskId: "task-1001", driverId: "drv-1", value: "4812", idempotencyKey: nil, now: 0).outcome
            == .accepted(PODReceipt(taskId: "task-1001", type: .otp, accepted: true)))
        #expect(update(&world, "task-1001", .delivered, key: "6").outcome == accepted("task-1001", .delivered, from: .arrivedAtDestination, key: "6"))
        #expect(world.activeTasks(driverId: "drv-1", now: 0).tasks.map(\.id) == ["task-1002"])
        #expect(update(&world, "nope", .accepted, key: "7").outcome == .notFound)
        #expect(update(&world, "task-1002", .accepted, key: "8", driver: "drv-2").outcome == .notFound)
        // CANCELLED belongs to the dispatcher.
        guard case .invalidTransition = update(&world, "task-1002", .cancelled, key: "9").outcome else {
            Issue.record("a driver must not cancel")
            return
        }
    }

    @Test("OTP: wrong codes count down to a lock, a replayed key costs no attempt; photo tasks take no OTP")
    func otp() {
        var world = world()
        for (key, status) in [("1", TaskStatus.accepted), ("2", .arrivedAtStore), ("3", .pickedUp)] { _ = update(&world, "task-1001", status, key: key) }
        func otp(_ value: String, key: String? = nil, task: String = "task-1001") -> PODOutcome {
            world.submitOTP(taskId: task, driverId: "drv-1", value: value, idempotencyKey: key, now: 0).outcome
        }
        #expect(otp("0000", key: "a") == .otpWrong(attemptsLeft: 2))
        #expect(otp("0000", key: "a") == .otpWrong(attemptsLeft: 2))
        #expect(otp("1111") == .otpWrong(attemptsLeft: 1))
        #expect(otp("2222") == .otpLocked)
        #expect(otp("4812") == .otpLocked)
        #expect(world.stats.otpFailures == 3)
        guard case .typeMismatch = otp("4812", task: "task-1002") else {
            Issue.record("a photo task takes no OTP")
            return
        }
        let photo = PhotoProof(sha256: String(repeating: "a", count: 64), bytes: 10, lat: 49, lng: 12, timestamp: 0)
        guard case .notDeliverable = world.submitPhoto(taskId: "task-1002", driverId: "drv-1", photo: photo, idempotencyKey: nil, now: 0).outcome else {
            Issue.record("a photo before pickup is refused")
            return
        }
    }

    @Test("location batches are deduplicated by batch id and pings counted once; ETA pushes are throttled")
    func batches() {
        var world = world()
        let pings = (0..<5).map { LocationPing(lat: 49.02, lng: 12.09 + Double($0) / 1000, timestamp: Double($0)) }
        let first = world.ingest(batch: LocationBatch(batchId: "b1", pings: pings), driverId: "drv-1", now: 100)
        #expect(first.ack == BatchAck(batchId: "b1", received: 5, unique: 5, duplicate: false))
        #expect(first.push?.kind == .eta && first.push?.taskId == "task-1001")
        #expect(world.ingest(batch: LocationBatch(batchId: "b1", pings: pings), driverId: "drv-1", now: 101, overWebSocket: true).ack.duplicate)
        let overlap = world.ingest(batch: LocationBatch(batchId: "b2", pings: Array(pings.suffix(2))), driverId: "drv-1", now: 110)
        #expect(overlap.ack.unique == 0 && overlap.push == nil)
        #expect(world.stats.batches == 2 && world.stats.pingsReceived == 7 && world.stats.uniquePings == 5 && world.stats.duplicateBatches == 1)
        // A duplicate over the WebSocket is not a new WebSocket batch; a first copy is.
        #expect(world.stats.webSocketBatches == 0)
        _ = world.ingest(batch: LocationBatch(batchId: "b4", pings: [pings[1]]), driverId: "drv-1", now: 112, overWebSocket: true)
        #expect(world.stats.webSocketBatches == 1 && world.stats.batches == 3)
        #expect(world.lastPosition["drv-1"]?.timestamp == 4)
        #expect(world.ingest(batch: LocationBatch(batchId: "b3", pings: [pings[0]]), driverId: "drv-1", now: 130).push?.kind == .eta)
    }

    @Test("a parked van is present: its last position, since when it stands, when its next report is due by the cadence it told")
    func presence() {
        var world = world()
        func ping(_ t: Double, speed: Double) -> LocationPing { LocationPing(lat: 49.02, lng: 12.1 + t * 1e-6, speed: speed, timestamp: t) }
        _ = world.ingest(batch: LocationBatch(batchId: "m", pings: [ping(1, speed: 12), ping(2, speed: 8)], nextBatchWithin: 5), driverId: "drv-1", now: 100)
        #expect(world.locations(driverId: "drv-1").parkedSince == nil)
        _ = world.ingest(batch: LocationBatch(batchId: "p", pings: [ping(3, speed: 0.4), ping(63, speed: 0.05)], nextBatchWithin: 120), driverId: "drv-1", now: 160)
        // A backlog batch of older pings afterwards changes nothing.
        _ = world.ingest(batch: LocationBatch(batchId: "old", pings: [ping(0.5, speed: 14)]), driverId: "drv-1", now: 161)
        let parked = world.locations(driverId: "drv-1")
        #expect(parked.parkedSince == 3 && parked.lastPosition?.timestamp == 63)
        #expect(parked.lastReportAt == 161 && parked.nextReportDue == nil)
        _ = world.ingest(batch: LocationBatch(batchId: "p2", pings: [ping(183, speed: 0.1)], nextBatchWithin: 120), driverId: "drv-1", now: 280)
        #expect(world.locations(driverId: "drv-1").nextReportDue == 400 && world.locations(driverId: "drv-1").parkedSince == 3)
        _ = world.ingest(batch: LocationBatch(batchId: "d", pings: [ping(190, speed: 6)], nextBatchWithin: 5), driverId: "drv-1", now: 290)
        #expect(world.locations(driverId: "drv-1").parkedSince == nil)
    }

    @Test("ETA: great-circle distance to the next stop over the scenario speed")
    func eta() {
        var world = world()
        #expect(world.eta(taskId: "task-1001", driverId: "drv-1", now: 0)?.etaSeconds == nil)
        #expect(world.eta(taskId: "task-1001", driverId: "drv-2", now: 0) == nil)
        // 800 m south of the pickup: 100 s at 8 m/s.
        _ = world.ingest(batch: LocationBatch(batchId: "b", pings: [LocationPing(lat: 49.02100 - 800 / 111_195, lng: 12.09700, timestamp: 0)]), driverId: "drv-1", now: 0)
        let eta = world.eta(taskId: "task-1001", driverId: "drv-1", now: 0)
        #expect(eta?.stopId == "task-1001-pickup")
        #expect(abs((eta?.etaSeconds ?? 0) - 100) < 1)
    }

    @Test("dispatcher changes become pushes with growing ids; a resequence keeps pickups before drop-offs")
    func dispatcher() throws {
        var world = world()
        let place = Scenario.Place(address: "x", lat: 49, lng: 12, name: "n", phone: "p")
        let assigned = try world.assign(Scenario.Task(id: "task-9", driverId: "drv-1", pickup: place, dropoff: place, podType: .photo), now: 1).get()
        #expect(assigned.id == 1 && assigned.kind == .taskAssigned && assigned.task?.status == .assigned)
        #expect(assigned.sequence?.suffix(2) == ["task-9-pickup", "task-9-dropoff"])
        #expect(throws: SimRefusal.self) { try world.assign(Scenario.Task(id: "task-9", driverId: "drv-1", pickup: place, dropoff: place, podType: .photo), now: 1).get() }
        #expect(try world.cancel(taskId: "task-9", now: 2).get().kind == .taskCancelled)
        #expect(throws: SimRefusal.self) { try world.cancel(taskId: "task-9", now: 2).get() }
        let changed = try world.changeRoute(taskId: "task-1001", dropoff: place, waypoints: [.init(lat: 49.5, lng: 12.5)], now: 3).get()
        #expect(changed.kind == .routeChanged && changed.task?.stops[1].address == "x")
        #expect(Polyline.decode(changed.task?.polyline ?? "")?.count == 3)
        #expect(try world.message(driverId: "drv-1", taskId: "task-1001", text: "ring twice", now: 4).get().message == "ring twice")
        let order = ["task-1002-pickup", "task-1002-dropoff", "task-1001-pickup", "task-1001-dropoff"]
        #expect(try world.resequence(driverId: "drv-1", to: order, byDispatcher: true, now: 5).get() == order)
        #expect(world.lastPush(driverId: "drv-1")?.sequence == order)
        let bad = world.resequence(driverId: "drv-1", to: ["task-1002-dropoff", "task-1002-pickup", "task-1001-pickup", "task-1001-dropoff"], byDispatcher: false, now: 6)
        #expect((try? bad.get()) == nil)
        #expect((try? world.resequence(driverId: "drv-1", to: Array(order.prefix(3)), byDispatcher: false, now: 6).get()) == nil)
        #expect(world.pushes(driverId: "drv-1", after: 3).map(\.id) == [4, 5])
        #expect(world.activeTasks(driverId: "drv-1", now: 7).sequence == order)
    }

    @Test("the whole world survives a JSON round trip, idempotency ledger included")
    func persistence() throws {
        var world = world()
        _ = update(&world, "task-1001", .accepted, key: "k")
        var restored = try JSONDecoder().decode(SimWorld.self, from: JSONEncoder().encode(world))
        #expect(update(&restored, "task-1001", .accepted, key: "k").replayed)
        #expect(restored.tasks == world.tasks)
    }

    @Test("the ledger keeps the first answer")
    func ledger() {
        var ledger = IdempotencyLedger<Int>()
        #expect(ledger.check(key: "k", bodyDigest: "d") == .new)
        ledger.record(key: "k", bodyDigest: "d", response: 1)
        ledger.record(key: "k", bodyDigest: "e", response: 2)
        #expect(ledger.check(key: "k", bodyDigest: "d") == .replay(1))
        #expect(ledger.check(key: "k", bodyDigest: "e") == .conflict)
        #expect(ledger.count == 1)
    }
}
