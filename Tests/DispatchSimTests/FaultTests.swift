import BackendContract
import DispatchSim
import DispatchSimCore
import Foundation
import Testing

@Suite("dispatch-sim: fault injection")
struct FaultTests {
    @Test("a lost answer: the update is applied, the connection closes, and the retry with the same key is a replay")
    func dropAfter() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            _ = try await sim.json(.PUT, "/sim/faults", FaultPlan(dropAfterRate: 1, limit: 1))
            await #expect(throws: (any Error).self) { try await sim.status("task-1001", .ACCEPTED, key: "lost", token: token) }
            #expect(try await sim.stats().statusUpdates.map(\.idempotencyKey) == ["lost"])
            let retry = try await sim.status("task-1001", .ACCEPTED, key: "lost", token: token)
            #expect(retry.status == 200 && retry.headers["Idempotent-Replayed"].first == "true")
            let stats = try await sim.stats()
            #expect(stats.statusUpdates.count == 1 && stats.faultsInjected == 1)
        }
    }

    @Test("a lost request: nothing is applied; the retry applies it")
    func dropBefore() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            _ = try await sim.json(.PUT, "/sim/faults", FaultPlan(dropBeforeRate: 1, limit: 1))
            await #expect(throws: (any Error).self) { try await sim.status("task-1001", .ACCEPTED, key: "k", token: token) }
            #expect(try await sim.stats().statusUpdates.isEmpty)
            let retry = try await sim.status("task-1001", .ACCEPTED, key: "k", token: token)
            #expect(retry.status == 200 && retry.headers["Idempotent-Replayed"].isEmpty)
        }
    }

    @Test("5xx answers without handling; the /sim/ API is never faulted; latency delays; a bad plan is a 400")
    func errorsAndLatency() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            _ = try await sim.json(.PUT, "/sim/faults", FaultPlan(errorRate: 1, errorStatus: 502))
            let failed = try await sim.request(.GET, BackendPaths.activeTasks, token: token)
            #expect(failed.status == 502 && failed.error?.code == .injectedFault)
            #expect(try await sim.status("task-1001", .ACCEPTED, key: "x", token: token).status == 502)
            #expect(try await sim.request(.GET, "/sim/stats").status == 200)
            #expect(try await sim.stats().statusUpdates.isEmpty)

            _ = try await sim.json(.PUT, "/sim/faults", FaultPlan(latencyMs: 300))
            let start = ContinuousClock.now
            #expect(try await sim.request(.GET, BackendPaths.activeTasks, token: token).status == 200)
            #expect(ContinuousClock.now - start >= .milliseconds(300))

            let bad = try await sim.json(.PUT, "/sim/faults", FaultPlan(errorRate: 2, errorStatus: 200))
            #expect(bad.status == 400 && bad.error?.message.contains("errorRate") == true)
            let cleared = try await sim.request(.DELETE, "/sim/faults").decode([String: FaultPlanOrNumber].self)
            #expect(cleared["refusingForSeconds"] == .number(0))
            #expect(try await sim.stats().faultsInjected == 2)
        }
    }

    @Test("refusing connections: requests fail for the window, then work")
    func refuse() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            _ = try await sim.json(.POST, "/sim/faults/refuse", ["seconds": 1])
            await #expect(throws: (any Error).self) { try await sim.request(.GET, BackendPaths.activeTasks, token: token) }
            try await Task.sleep(for: .seconds(1.2))
            #expect(try await sim.request(.GET, BackendPaths.activeTasks, token: token).status == 200)
        }
    }
}

/// A `/sim/faults` answer decoded loosely.
enum FaultPlanOrNumber: Decodable, Equatable {
    case number(Double)
    case plan(FaultPlan)

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Double.self) { self = .number(number) } else { self = .plan(try container.decode(FaultPlan.self)) }
    }
}
