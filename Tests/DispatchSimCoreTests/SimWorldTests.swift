import DispatchSimCore
import DriverAPI
import DriverDomain
import Foundation
import Testing

@Suite("Reference backend rules")
struct SimWorldTests {
    func world() -> SimWorld { SimWorld(scenario: .builtIn) }

    @Test("the built-in world has a driver with two active tasks and round-trips through JSON")
    func builtIn() throws {
        let world = world()
        #expect(world.activeTasks(driverId: "drv-1").map(\.task.id) == ["task-1001", "task-1002"])
        let data = try JSONEncoder().encode(Scenario.builtIn)
        #expect(try JSONDecoder().decode(Scenario.self, from: data) == .builtIn)
        #expect(String(decoding: data, as: UTF8.self).contains(#""status":"ASSIGNED""#))
    }

    @Test("idempotency: a replayed key returns the first answer and changes nothing; another body is refused")
    func idempotency() {
        var world = world()
        #expect(world.updateStatus(taskId: "task-1001", to: .accepted, idempotencyKey: "k1", bodyDigest: "a", at: 1) == .applied(.accepted))
        #expect(world.updateStatus(taskId: "task-1001", to: .accepted, idempotencyKey: "k1", bodyDigest: "a", at: 2) == .replayed(.accepted))
        #expect(world.updateStatus(taskId: "task-1001", to: .arrivedAtStore, idempotencyKey: "k1", bodyDigest: "b", at: 3) == .keyReused)
        #expect(world.statusUpdates.count == 1)
        #expect(world.duplicateRequests == 1)
        #expect(world.tasks["task-1001"]?.task.status == .accepted)
    }

    @Test("an invalid transition is refused with the current status; DELIVERED needs an accepted POD")
    func transitions() {
        var world = world()
        #expect(world.updateStatus(taskId: "task-1001", to: .pickedUp, idempotencyKey: "x", bodyDigest: "x", at: 0) == .invalidTransition(current: .assigned))
        // A refused key is not remembered: the driver can retry it once the state allows.
        for (key, status) in [("1", TaskStatus.accepted), ("2", .arrivedAtStore), ("3", .pickedUp), ("4", .arrivedAtDestination)] {
            #expect(world.updateStatus(taskId: "task-1001", to: status, idempotencyKey: key, bodyDigest: key, at: 0) == .applied(status))
        }
        #expect(world.updateStatus(taskId: "task-1001", to: .delivered, idempotencyKey: "5", bodyDigest: "5", at: 0) == .podRequired(current: .arrivedAtDestination))
        #expect(world.submitOTP(taskId: "task-1001", value: "4812") == .accepted)
        #expect(world.updateStatus(taskId: "task-1001", to: .delivered, idempotencyKey: "5", bodyDigest: "5", at: 0) == .applied(.delivered))
        #expect(world.activeTasks(driverId: "drv-1").map(\.task.id) == ["task-1002"])
        #expect(world.updateStatus(taskId: "nope", to: .accepted, idempotencyKey: "6", bodyDigest: "6", at: 0) == .notFound)
        #expect(world.updateStatus(taskId: "task-1002", to: .cancelled, idempotencyKey: "7", bodyDigest: "7", at: 0) == .applied(.cancelled))
    }

    @Test("OTP: wrong codes count down to a lock; photo tasks take no OTP")
    func otp() {
        var world = world()
        #expect(world.submitOTP(taskId: "task-1001", value: "0000") == .wrong(attemptsLeft: 2))
        #expect(world.submitOTP(taskId: "task-1001", value: "1111") == .wrong(attemptsLeft: 1))
        #expect(world.submitOTP(taskId: "task-1001", value: "2222") == .locked)
        #expect(world.submitOTP(taskId: "task-1001", value: "4812") == .locked)
        #expect(world.submitOTP(taskId: "task-1002", value: "4812") == .notOTPTask)
        let photoAccepted = world.acceptPhoto(taskId: "task-1002")
        let photoOnOTPTask = world.acceptPhoto(taskId: "task-1001")
        #expect(photoAccepted && !photoOnOTPTask)
    }

    @Test("location batches are deduplicated by batch id and pings counted once")
    func batches() {
        var world = world()
        let pings = (0..<5).map { Fix(time: Double($0), latitude: 49.02, longitude: 12.09 + Double($0) / 1000) }
        #expect(world.ingest(batchId: "b1", driverId: "drv-1", pings: pings) == .accepted(unique: 5))
        #expect(world.ingest(batchId: "b1", driverId: "drv-1", pings: pings) == .duplicate)
        #expect(world.ingest(batchId: "b2", driverId: "drv-1", pings: Array(pings.suffix(2))) == .accepted(unique: 0))
        #expect(world.batchesReceived == 2 && world.pingsReceived == 7 && world.uniquePings == 5)
        #expect(world.lastPosition["drv-1"]?.time == 4)
    }

    @Test("ETA: great-circle distance to the next stop over the scenario speed")
    func eta() {
        var world = world()
        #expect(world.eta(taskId: "task-1001") == nil)
        // 800 m south of the pickup: 100 s at 8 m/s.
        _ = world.ingest(batchId: "b", driverId: "drv-1", pings: [Fix(time: 0, latitude: 49.02100 - 800 / 111_195, longitude: 12.09700)])
        let seconds = world.eta(taskId: "task-1001") ?? 0
        #expect(abs(seconds - 100) < 1)
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
