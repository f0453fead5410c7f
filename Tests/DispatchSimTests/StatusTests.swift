import BackendContract
import DispatchSim
import DispatchSimCore
import Foundation
import Testing

@Suite("dispatch-sim: status updates, idempotency, transitions")
struct StatusTests {
    @Test("active tasks: two tasks with pickup and drop-off stops, a multi-order sequence and decodable polylines")
    func activeTasks() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            let active = try await sim.request(.GET, BackendPaths.activeTasks, token: token).decode(ActiveTasks.self)
            #expect(active.tasks.map(\.id) == ["task-1001", "task-1002"])
            #expect(active.tasks.map(\.podType) == [.otp, .photo])
            #expect(active.sequence == ["task-1001-pickup", "task-1002-pickup", "task-1001-dropoff", "task-1002-dropoff"])
            for task in active.tasks {
                let line = try #require(Polyline.decode(task.polyline))
                #expect(line.first?.lat == task.stops[0].lat && line.last?.lng == task.stops[1].lng)
            }
        }
    }

    @Test("a replayed key returns the first answer byte for byte and changes nothing; another body under it is a 422")
    func replay() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            let first = try await sim.status("task-1001", .ACCEPTED, key: "key-1", token: token)
            #expect(first.status == 200 && first.headers["Idempotent-Replayed"].isEmpty)
            #expect(try first.decode(StatusAccepted.self).previousStatus == .assigned)
            let again = try await sim.status("task-1001", .ACCEPTED, key: "key-1", token: token)
            #expect(again.status == 200 && again.body == first.body && again.headers["Idempotent-Replayed"].first == "true")
            let reused = try await sim.status("task-1001", .ARRIVED_AT_STORE, key: "key-1", token: token)
            #expect(reused.status == 422 && reused.error?.code == .idempotencyKeyReused)
            let otherTask = try await sim.status("task-1002", .ACCEPTED, key: "key-1", token: token)
            #expect(otherTask.status == 422)
            let stats = try await sim.stats()
            #expect(stats.statusUpdates.map(\.idempotencyKey) == ["key-1"] && stats.duplicateRequests == 1)
        }
    }

    @Test("invalid transitions are 409 with the server's task; DELIVERED before a POD is 409 POD_REQUIRED; the rest of the errors")
    func refusals() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            let skip = try await sim.status("task-1001", .PICKED_UP, key: "a", token: token)
            #expect(skip.status == 409 && skip.error?.code == .invalidTransition && skip.error?.task?.status == .assigned)
            try await sim.advance("task-1001", through: [.ACCEPTED, .ARRIVED_AT_STORE, .PICKED_UP, .ARRIVED_AT_DESTINATION], token: token)
            let early = try await sim.status("task-1001", .DELIVERED, key: "b", token: token)
            #expect(early.status == 409 && early.error?.code == .podRequired && early.error?.task?.status == .arrivedAtDestination)
            let noReason = try await sim.status("task-1001", .DELIVERY_FAILED, key: "c", token: token)
            #expect(noReason.status == 400 && noReason.error?.message.contains("reason") == true)
            let failed = try await sim.status("task-1001", .DELIVERY_FAILED, key: "d", token: token, reason: "CUSTOMER_UNAVAILABLE")
            #expect(failed.status == 200)
            #expect(try await sim.status("task-1001", .RETURNED_TO_VENDOR, key: "e", token: token).status == 200)
            let cancelByDriver = try await sim.status("task-1002", .CANCELLED, key: "f", token: token)
            #expect(cancelByDriver.status == 409)
            #expect(try await sim.status("task-9999", .ACCEPTED, key: "g", token: token).error?.code == .notFound)
            let noKey = try await sim.json(.PATCH, BackendPaths.taskStatus("task-1002"), ["status": "ACCEPTED"], token: token)
            #expect(noKey.status == 400 && noKey.error?.code == .idempotencyKeyMissing)
            let badBody = try await sim.request(.PATCH, BackendPaths.taskStatus("task-1002"), token: token, headers: [("Idempotency-Key", "h")], body: Data(#"{"status":"FLYING","timestamp":1}"#.utf8))
            #expect(badBody.status == 400 && badBody.error?.code == .badRequest)
            let tasks = try await sim.request(.GET, "/sim/tasks/task-1001").decode(SimTaskView.self)
            #expect(tasks.task.status == .returnedToVendor && tasks.task.failureReason == .customerUnavailable)
        }
    }

    @Test("another driver's task is not found to this driver")
    func otherDriver() async throws {
        var options = SimOptions()
        options.scenario.drivers.append(.init(id: "drv-2", username: "rider2", password: "pw2"))
        try await SimHarness.run(options) { sim in
            let token = try await sim.login("rider2", "pw2").accessToken
            #expect(try await sim.request(.GET, BackendPaths.activeTasks, token: token).decode(ActiveTasks.self).tasks.isEmpty)
            #expect(try await sim.status("task-1001", .ACCEPTED, key: "x", token: token).status == 404)
            #expect(try await sim.request(.GET, BackendPaths.taskETA("task-1001"), token: token).status == 404)
        }
    }

    @Test("concurrent replays of one key: one update applied, every answer the same")
    func concurrentReplays() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            let replies = try await withThrowingTaskGroup(of: SimHarness.Reply.self) { group in
                for _ in 0..<40 { group.addTask { try await sim.status("task-1001", .ACCEPTED, key: "same-key", token: token) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.allSatisfy { $0.status == 200 && $0.body == replies[0].body })
            #expect(replies.filter { $0.headers["Idempotent-Replayed"].first == "true" }.count == 39)
            let stats = try await sim.stats()
            #expect(stats.statusUpdates.count == 1 && stats.duplicateRequests == 39)
        }
    }

    @Test("concurrent distinct keys for the same transition: exactly one applies, the others are 409")
    func concurrentRace() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            let codes = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<20 { group.addTask { try await sim.status("task-1001", .ACCEPTED, key: "k\(index)", token: token).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(codes.filter { $0 == 200 }.count == 1 && codes.filter { $0 == 409 }.count == 19)
            #expect(try await sim.stats().statusUpdates.count == 1)
        }
    }
}

/// `/sim/tasks/{id}`.
struct SimTaskView: Decodable {
    var driverId: String
    var task: RiderTask
    var otpAttemptsLeft: Int
    var photo: PhotoProof?
}
