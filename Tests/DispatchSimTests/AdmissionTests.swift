import AsyncHTTPClient
import BackendContract
import DispatchSim
import DispatchSimCore
import Foundation
import Testing

@Suite("dispatch-sim: admission control")
struct AdmissionTests {
    /// The counts the backend keeps (`GET /sim/admission`).
    struct Status: Decodable {
        var limits: AdmissionLimits
        var outageForSeconds: Double
        var peakConnectionAttempts: Int
        var peakRequests: Int
        var seconds: [AdmissionSecond]
    }

    @Test("past its new connections a second: 429 OVERLOADED with Retry-After and the connection closed; a held connection goes on; an outage answers 503 with the time left; counted a second")
    func overloadAndOutage() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            _ = try await sim.json(.PUT, "/sim/admission", AdmissionLimits(connectionsPerSecond: 0.01))
            // Another unit's first request is a new connection: refused, and told when to come back.
            let other = HTTPClient(eventLoopGroupProvider: .singleton)
            let stranger = SimHarness(port: sim.port, http: other)
            let refused = try await stranger.request(.GET, BackendPaths.activeTasks, token: token)
            #expect(refused.status == 429 && refused.error?.code == .overloaded)
            #expect(refused.headers["Connection"].first == "close")
            let retryAfter = try #require(refused.headers["Retry-After"].first.flatMap(Int.init))
            #expect(retryAfter >= 1)
            // Each refusal books the next free slot: the next one is told to wait longer.
            let again = try await stranger.request(.GET, BackendPaths.activeTasks, token: token)
            #expect(again.status == 429 && Int(again.headers["Retry-After"].first ?? "")! > retryAfter)
            // The first unit's connection was taken before the limit: it is not a new one.
            #expect(try await sim.request(.GET, BackendPaths.activeTasks, token: token).status == 200)

            let status = try await sim.request(.GET, "/sim/admission").decode(Status.self)
            #expect(status.seconds.map(\.refused).reduce(0, +) == 2)
            #expect(status.seconds.map(\.connectionAttempts).reduce(0, +) >= 2)
            #expect(status.peakRequests >= 2 && status.limits.connectionsPerSecond == 0.01)

            let outage = try await sim.json(.POST, "/sim/admission/outage", ["seconds": 30])
            #expect(outage.status == 200)
            let down = try await sim.request(.GET, BackendPaths.activeTasks, token: token)
            #expect(down.status == 503 && down.error?.code == .unavailable)
            #expect((29...30).contains(Int(down.headers["Retry-After"].first ?? "") ?? 0))
            #expect(try await sim.request(.GET, "/sim/stats").status == 200)  // the dispatcher's API is never refused

            _ = try await sim.json(.POST, "/sim/admission/outage", ["seconds": 0])
            _ = try await sim.json(.PUT, "/sim/admission", AdmissionLimits())
            #expect(try await stranger.request(.GET, BackendPaths.activeTasks, token: token).status == 200)
            let bad = try await sim.json(.PUT, "/sim/admission", AdmissionLimits(connectionsPerSecond: -1, status: 500))
            #expect(bad.status == 400 && bad.error?.message.contains("status must be 429 or 503") == true)
            try await other.shutdown()
        }
    }

    @Test("a rider WebSocket's upgrade past the limit, or under a fault plan's 503, is answered as a request is (429 with Retry-After and the error body), not with Hummingbird's bare 400")
    func upgradeRefused() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            let upgrade = [
                ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Version", "13"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ]
            _ = try await sim.json(.PUT, "/sim/admission", AdmissionLimits(connectionsPerSecond: 0.01))
            let other = HTTPClient(eventLoopGroupProvider: .singleton)
            let stranger = SimHarness(port: sim.port, http: other)
            let refused = try await stranger.request(.GET, BackendPaths.webSocket, token: token, headers: upgrade)
            #expect(refused.status == 429 && refused.error?.code == .overloaded)
            #expect((refused.headers["Retry-After"].first.flatMap(Int.init) ?? 0) >= 1)
            _ = try await sim.json(.PUT, "/sim/admission", AdmissionLimits())

            _ = try await sim.json(.PUT, "/sim/faults", FaultPlan(errorRate: 1, errorStatus: 503, retryAfter: "7", limit: 1, pathPrefix: BackendPaths.webSocket))
            let faulted = try await stranger.request(.GET, BackendPaths.webSocket, token: token, headers: upgrade)
            #expect(faulted.status == 503 && faulted.headers["Retry-After"].first == "7" && faulted.headers["Date"].first != nil)
            try await other.shutdown()
        }
    }
}
