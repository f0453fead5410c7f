import BackendContract
import DispatchSim
import DispatchSimCore
import Foundation
import Testing

@Suite("dispatch-sim: dispatcher API, pushes and the rider WebSocket")
struct PushTests {
    static let place = Scenario.Place(address: "Arnulfsplatz 1, Regensburg", lat: 49.0195, lng: 12.0890, name: "C. Customer", phone: "+49 151 0000003")

    @Test("each dispatcher change is a push with the next id, listed by GET /pushes?after=")
    func dispatcherPushes() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            let task = Scenario.Task(id: "task-2001", driverId: "drv-1", pickup: Self.place, dropoff: Self.place, podType: .otp, otp: "1234")
            let assigned = try await sim.json(.POST, "/sim/tasks", task)
            #expect(assigned.status == 201)
            #expect(try assigned.decode(Push.self).kind == .taskAssigned)
            #expect(try await sim.json(.POST, "/sim/tasks", task).status == 400)
            let route = try await sim.json(.POST, "/sim/tasks/task-1001/route", ["waypoints": [["lat": 49.02, "lng": 12.098]]])
            #expect(try route.decode(Push.self).kind == .routeChanged)
            #expect(try await sim.request(.POST, "/sim/tasks/task-2001/cancel").decode(Push.self).kind == .taskCancelled)
            #expect(try await sim.request(.POST, "/sim/tasks/task-2001/cancel").status == 409)
            let message = try await sim.json(.POST, "/sim/messages", ["driverId": "drv-1", "taskId": "task-1001", "text": "Please ring twice"])
            #expect(message.status == 201)
            let order = ["task-1002-pickup", "task-1002-dropoff", "task-1001-pickup", "task-1001-dropoff"]
            let resequenced = try await sim.json(.POST, "/sim/drivers/drv-1/sequence", RouteSequence(sequence: order)).decode(Push.self)
            #expect(resequenced.sequence == order)

            let all = try await sim.request(.GET, BackendPaths.pushes + "?after=0", token: token).decode(PushList.self).pushes
            #expect(all.map(\.id) == [1, 2, 3, 4, 5])
            #expect(all.map(\.kind) == [.taskAssigned, .routeChanged, .taskCancelled, .customerMessage, .routeChanged])
            #expect(try await sim.request(.GET, BackendPaths.pushes + "?after=3", token: token).decode(PushList.self).pushes.map(\.id) == [4, 5])
            #expect(try await sim.request(.GET, BackendPaths.pushes + "?after=x", token: token).status == 400)
            #expect(try await sim.request(.GET, BackendPaths.activeTasks, token: token).decode(ActiveTasks.self).sequence == order)
        }
    }

    @Test("the driver re-sequences with PUT /route; an order that drops a stop or puts a drop-off first is a 422")
    func driverResequence() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            let order = ["task-1002-pickup", "task-1001-pickup", "task-1002-dropoff", "task-1001-dropoff"]
            let reply = try await sim.json(.PUT, BackendPaths.route, RouteSequence(sequence: order), token: token)
            #expect(try reply.decode(RouteSequence.self).sequence == order)
            let dropFirst = ["task-1002-dropoff", "task-1001-pickup", "task-1002-pickup", "task-1001-dropoff"]
            #expect(try await sim.json(.PUT, BackendPaths.route, RouteSequence(sequence: dropFirst), token: token).error?.code == .invalidSequence)
            #expect(try await sim.json(.PUT, BackendPaths.route, RouteSequence(sequence: Array(order.prefix(2))), token: token).status == 422)
        }
    }

    @Test("WebSocket: hello replays missed pushes, new ones arrive live, batches are acked (duplicates too), bad frames get an error")
    func webSocket() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            _ = try await sim.json(.POST, "/sim/messages", ["driverId": "drv-1", "text": "before you connected"])
            try await WebSocketSession.run(port: sim.port, token: token) { reader, outbound in
                try await WebSocketSession.send(.hello(lastPushId: 0), outbound)
                guard case .push(let missed) = try await reader.next() else { throw HarnessError("expected the missed push") }
                #expect(missed.id == 1 && missed.message == "before you connected")

                _ = try await sim.json(.POST, "/sim/messages", ["driverId": "drv-1", "text": "live"])
                guard case .push(let live) = try await reader.next() else { throw HarnessError("expected a live push") }
                #expect(live.id == 2 && live.message == "live")

                let batch = LocationBatch(batchId: "ws-1", pings: LocationTests.pings(3))
                try await WebSocketSession.send(.locations(batch), outbound)
                // The first batch also makes an ETA push; it may come before or after the ack.
                var got: [WSServerMessage] = [try await reader.next(), try await reader.next()]
                #expect(got.contains(.ack(BatchAck(batchId: "ws-1", received: 3, unique: 3, duplicate: false))))
                #expect(got.contains { if case .push(let push) = $0 { push.kind == .eta && push.etaSeconds != nil } else { false } })
                try await WebSocketSession.send(.locations(batch), outbound)
                got = [try await reader.next()]
                #expect(got == [.ack(BatchAck(batchId: "ws-1", received: 3, unique: 0, duplicate: true))])

                try await outbound.write(.text("{not json"))
                guard case .error(let error) = try await reader.next() else { throw HarnessError("expected an error frame") }
                #expect(error.code == .badRequest)
                try await outbound.close(.normalClosure, reason: nil)
            }
            let stats = try await sim.stats()
            #expect(stats.batches == 1 && stats.duplicateBatches == 1)
        }
    }

    @Test("WebSocket: a push made between the upgrade and the hello comes after the hello's catch-up (pushes in id order)")
    func newPushWaitsForCatchUp() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            _ = try await sim.json(.POST, "/sim/messages", ["driverId": "drv-1", "text": "missed"])
            try await WebSocketSession.run(port: sim.port, token: token) { reader, outbound in
                try await sim.waitForWebSocket()
                _ = try await sim.json(.POST, "/sim/messages", ["driverId": "drv-1", "text": "new"])
                try await WebSocketSession.send(.hello(lastPushId: 0), outbound)
                var ids: [Int] = []
                for _ in 0..<2 {
                    guard case .push(let push) = try await reader.next() else { throw HarnessError("expected a push") }
                    ids.append(push.id)
                }
                #expect(ids == [1, 2])
                try await outbound.close(.normalClosure, reason: nil)
            }
        }
    }

    @Test("WebSocket: an upgrade that names the last push seen starts the catch-up without a hello; new pushes follow in id order")
    func catchUpInUpgrade() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            _ = try await sim.json(.POST, "/sim/messages", ["driverId": "drv-1", "text": "seen"])
            _ = try await sim.json(.POST, "/sim/messages", ["driverId": "drv-1", "text": "missed"])
            try await WebSocketSession.run(port: sim.port, token: token, path: BackendPaths.webSocket(lastPushId: 1)) { reader, outbound in
                guard case .push(let missed) = try await reader.next() else { throw HarnessError("expected the missed push") }
                #expect(missed.id == 2 && missed.message == "missed")
                _ = try await sim.json(.POST, "/sim/messages", ["driverId": "drv-1", "text": "live"])
                guard case .push(let live) = try await reader.next() else { throw HarnessError("expected a live push") }
                #expect(live.id == 3)
                try await outbound.close(.normalClosure, reason: nil)
            }
            #expect(try await sim.stats().webSocketFrames == 0)
        }
    }

    @Test("WebSocket: the dispatcher can close every socket; no token or no upgrade is refused")
    func closeAndRefuse() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            let close = try await WebSocketSession.run(port: sim.port, token: token) { reader, outbound in
                try await WebSocketSession.send(.hello(lastPushId: 0), outbound)
                try await sim.waitForWebSocket()
                let closed = try await sim.request(.POST, "/sim/websockets/close").decode([String: Int].self)
                #expect(closed["count"] == 1)
                #expect(try await reader.nextOrClose() == nil)
            }
            #expect(close?.closeCode == .goingAway)
            let plain = try await sim.request(.GET, BackendPaths.webSocket, token: token)
            #expect(plain.status == 426 && plain.error?.code == .upgradeRequired)
            await #expect(throws: (any Error).self) {
                try await WebSocketSession.run(port: sim.port, token: "bad") { _, _ in }
            }
        }
    }
}
