import BackendContract
import DispatchSim
import Foundation
import Testing

@Suite("dispatch-sim: --state")
struct PersistenceTests {
    @Test("with a state file, tasks, idempotency keys, pushes and tokens survive a restart")
    func restart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sim-state-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var options = SimOptions()
        options.stateFile = directory.appendingPathComponent("world.json").path
        let token = try await SimHarness.run(options) { sim in
            let token = try await sim.login().accessToken
            #expect(try await sim.status("task-1001", .ACCEPTED, key: "persisted", token: token).status == 200)
            _ = try await sim.json(.POST, "/sim/messages", ["driverId": "drv-1", "text": "kept"])
            return token
        }
        try await SimHarness.run(options) { sim in
            let replay = try await sim.status("task-1001", .ACCEPTED, key: "persisted", token: token)
            #expect(replay.status == 200 && replay.headers["Idempotent-Replayed"].first == "true")
            let active = try await sim.request(.GET, BackendPaths.activeTasks, token: token).decode(ActiveTasks.self)
            #expect(active.tasks.first?.status == .accepted)
            #expect(try await sim.request(.GET, BackendPaths.pushes, token: token).decode(PushList.self).pushes.map(\.message) == ["kept"])
        }
    }
}
