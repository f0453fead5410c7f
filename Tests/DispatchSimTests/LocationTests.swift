import BackendContract
import CompressNIO
import DispatchSim
import Foundation
import NIOCore
import Testing

@Suite("dispatch-sim: location batches and ETA")
struct LocationTests {
    static func pings(_ count: Int, start: Double = 1_795_000_000) -> [LocationPing] {
        (0..<count).map { LocationPing(lat: 49.01 + Double($0) * 1e-5, lng: 12.09, accuracy: 5, speed: 8, heading: 90, timestamp: start + Double($0)) }
    }

    @Test("a batch is acked; its copy is acked as a duplicate and stored once; overlapping pings count once")
    func batches() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            let batch = LocationBatch(batchId: "batch-1", pings: Self.pings(10))
            let ack = try await sim.json(.POST, BackendPaths.locations, batch, token: token).decode(BatchAck.self)
            #expect(ack == BatchAck(batchId: "batch-1", received: 10, unique: 10, duplicate: false))
            let copy = try await sim.json(.POST, BackendPaths.locations, batch, token: token).decode(BatchAck.self)
            #expect(copy == BatchAck(batchId: "batch-1", received: 10, unique: 0, duplicate: true))
            let overlap = try await sim.json(.POST, BackendPaths.locations, LocationBatch(batchId: "batch-2", pings: Self.pings(15)), token: token)
            #expect(try overlap.decode(BatchAck.self).unique == 5)
            let stats = try await sim.stats()
            #expect(stats.batches == 2 && stats.duplicateBatches == 1 && stats.pingsReceived == 25 && stats.uniquePings == 15)
        }
    }

    @Test("limits: at most 500 pings and 256 KiB (413), at least one ping and a batch id (400)")
    func limits() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            let many = try await sim.json(.POST, BackendPaths.locations, LocationBatch(batchId: "big", pings: Self.pings(501)), token: token)
            #expect(many.status == 413 && many.error?.code == .payloadTooLarge)
            let padded = Data(#"{"batchId":"pad","pings":[],"x":""#.utf8) + Data(repeating: 0x61, count: LocationBatch.maxBytes) + Data(#""}"#.utf8)
            #expect(try await sim.request(.POST, BackendPaths.locations, token: token, body: padded).status == 413)
            #expect(try await sim.json(.POST, BackendPaths.locations, LocationBatch(batchId: "empty", pings: []), token: token).status == 400)
            #expect(try await sim.json(.POST, BackendPaths.locations, LocationBatch(batchId: "", pings: Self.pings(1)), token: token).status == 400)
            let offEarth = LocationBatch(batchId: "bad", pings: [LocationPing(lat: 91, lng: 0, timestamp: 0)])
            #expect(try await sim.json(.POST, BackendPaths.locations, offEarth, token: token).status == 400)
            #expect(try await sim.json(.POST, BackendPaths.locations, LocationBatch(batchId: "ok", pings: Self.pings(500)), token: token).status == 200)
        }
    }

    @Test("a batch carrying lost ones: each stored once under its own id and acked in order; a copy of the request is acked again; the limits hold for the whole request")
    func carried() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            let pings = Self.pings(12)
            // "lost-1" arrived before (its answer was lost), "lost-2" did not.
            _ = try await sim.json(.POST, BackendPaths.locations, LocationBatch(batchId: "lost-1", pings: Array(pings[0..<4])), token: token)
            let request = LocationBatch(
                batchId: "live", pings: Array(pings[8..<12]),
                carried: [LocationBatch(batchId: "lost-1", pings: Array(pings[0..<4])), LocationBatch(batchId: "lost-2", pings: Array(pings[4..<8]))])
            let ack = try await sim.json(.POST, BackendPaths.locations, request, token: token).decode(BatchAck.self)
            #expect(ack == BatchAck(batchId: "live", received: 4, unique: 4, duplicate: false, carried: [
                BatchAck(batchId: "lost-1", received: 4, unique: 0, duplicate: true), BatchAck(batchId: "lost-2", received: 4, unique: 4, duplicate: false),
            ]))
            let copy = try await sim.json(.POST, BackendPaths.locations, request, token: token).decode(BatchAck.self)
            #expect(copy.duplicate && copy.carried?.map(\.duplicate) == [true, true])
            let stats = try await sim.stats()
            #expect(stats.batches == 3 && stats.uniquePings == 12 && stats.pingsReceived == 12 && stats.duplicateBatches == 4)
            // Without carried batches the ack has none (as from a backend that predates them).
            let plain = try await sim.json(.POST, BackendPaths.locations, LocationBatch(batchId: "plain", pings: Self.pings(1)), token: token)
            #expect(try plain.decode(BatchAck.self).carried == nil)
            // 500 pings for the whole request; a carried batch holds pings and nothing else.
            let over = LocationBatch(batchId: "over", pings: Self.pings(250), carried: [LocationBatch(batchId: "over-0", pings: Self.pings(251))])
            #expect(try await sim.json(.POST, BackendPaths.locations, over, token: token).status == 413)
            let nested = LocationBatch(batchId: "n", pings: Self.pings(1), carried: [
                LocationBatch(batchId: "n-0", pings: Self.pings(1), carried: [LocationBatch(batchId: "n-1", pings: Self.pings(1))]),
            ])
            #expect(try await sim.json(.POST, BackendPaths.locations, nested, token: token).status == 400)
            let empty = LocationBatch(batchId: "e", pings: Self.pings(1), carried: [LocationBatch(batchId: "e-0", pings: [])])
            #expect(try await sim.json(.POST, BackendPaths.locations, empty, token: token).status == 400)
            #expect(try await sim.stats().batches == 4, "a refused request stores none of its batches")
        }
    }

    @Test("a gzipped batch (Content-Encoding: gzip) is taken; bad gzip is 400, another encoding 415, a bomb over 256 KiB 413")
    func gzipped() async throws {
        @Sendable func gzip(_ data: Data) throws -> Data {
            var buffer = ByteBuffer(bytes: data)
            return Data(try buffer.compress(with: .gzip()).readableBytesView)
        }
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            let json = try JSONEncoder().encode(LocationBatch(batchId: "gz", pings: Self.pings(500)))
            let compressed = try gzip(json)
            #expect(compressed.count * 3 < json.count, "\(compressed.count) of \(json.count) bytes")
            let encoding = [("Content-Encoding", "gzip")]
            let ack = try await sim.request(.POST, BackendPaths.locations, token: token, headers: encoding, body: compressed)
            #expect(try ack.decode(BatchAck.self) == BatchAck(batchId: "gz", received: 500, unique: 500, duplicate: false))
            #expect(try await sim.request(.POST, BackendPaths.locations, token: token, headers: encoding, body: Data("not gzip".utf8)).status == 400)
            #expect(try await sim.request(.POST, BackendPaths.locations, token: token, headers: [("Content-Encoding", "br")], body: json).status == 415)
            let bomb = try gzip(Data(#"{"batchId":"bomb","pings":[],"x":""#.utf8) + Data(repeating: 0x61, count: 4 * LocationBatch.maxBytes) + Data(#""}"#.utf8))
            #expect(bomb.count < 8 * 1024)
            #expect(try await sim.request(.POST, BackendPaths.locations, token: token, headers: encoding, body: bomb).status == 413)
        }
    }

    @Test("ETA: none before a position, then distance to the next stop over the configured speed")
    func eta() async throws {
        try await SimHarness.run { sim in
            let token = try await sim.login().accessToken
            let before = try await sim.request(.GET, BackendPaths.taskETA("task-1001"), token: token).decode(ETAResponse.self)
            #expect(before.etaSeconds == nil && before.stopId == "task-1001-pickup")
            // 800 m south of the pickup (Haidplatz): 100 s at the built-in 8 m/s.
            let position = LocationPing(lat: 49.02100 - 800 / 111_195, lng: 12.09700, timestamp: 1_795_000_000)
            _ = try await sim.json(.POST, BackendPaths.locations, LocationBatch(batchId: "p", pings: [position]), token: token)
            let eta = try await sim.request(.GET, BackendPaths.taskETA("task-1001"), token: token).decode(ETAResponse.self)
            #expect(abs((eta.etaSeconds ?? 0) - 100) < 1 && abs((eta.distanceMeters ?? 0) - 800) < 5)
            #expect(eta.positionTimestamp == 1_795_000_000)
            #expect(try await sim.request(.GET, BackendPaths.taskETA("task-0"), token: token).status == 404)
        }
    }
}
