import BackendContract
import DispatchSimCore
import Testing

/// The reference backend's side of fleet requests, pure: a request becomes a push; a bundle's chunks are stored
/// once each and the whole is checked against its sha256.
@Suite("Reference backend: fleet requests and bundles")
struct SimFleetTests {
    /// A stand-in digest: the byte sum in hex, padded to 64 digits (the server uses SHA-256).
    static func digest(_ bytes: [UInt8]) -> String {
        let sum = String(bytes.reduce(0) { $0 + Int($1) }, radix: 16)
        return String(repeating: "0", count: 64 - sum.count) + sum
    }

    @Test("a request is pushed to its driver's unit; an unknown driver or an unusable id is refused")
    func request() throws {
        var world = SimWorld(scenario: .builtIn)
        try world.sendRequest(FleetRequest(requestId: "diag-1", kind: .diagnosticBundle), driverId: "drv-1", now: 5)
        let push = try #require(world.pushes(driverId: "drv-1", after: 0).last)
        #expect(push.kind == .fleetRequest && push.request?.requestId == "diag-1")
        #expect(throws: SimRefusal.self) { try world.sendRequest(FleetRequest(requestId: "x", kind: .positionReport), driverId: "nobody", now: 5) }
        #expect(throws: SimRefusal.self) { try world.sendRequest(FleetRequest(requestId: "a/b", kind: .positionReport), driverId: "drv-1", now: 5) }
    }

    @Test("chunks in any order, one twice: stored once, complete when all are in and the digest matches; other bytes for a chunk held are refused")
    func chunks() throws {
        var world = SimWorld(scenario: .builtIn)
        let parts: [[UInt8]] = [[1, 2, 3], [4, 5], [6]]
        let sha = Self.digest(parts.flatMap { $0 })
        func put(_ index: Int, _ bytes: [UInt8], sha256: String = sha) throws -> ChunkAccepted {
            try world.receiveChunk(requestId: "diag-1", index: index, count: 3, sha256: sha256, bytes: bytes, driverId: "drv-1", digest: Self.digest)
        }
        #expect(try put(2, parts[2]).received == 1)
        #expect(try put(0, parts[0]).complete == false)
        #expect(try put(0, parts[0]).received == 2)
        #expect(throws: SimRefusal.self) { try put(0, [9, 9, 9]) }
        #expect(throws: SimRefusal.self) { try put(1, parts[1], sha256: String(repeating: "f", count: 64)) }
        #expect(try put(1, parts[1]).complete)
        let upload = try #require(world.bundle(requestId: "diag-1"))
        #expect(upload.bytes == [1, 2, 3, 4, 5, 6] && upload.duplicates == 1 && !upload.checksumMismatch)
        #expect(world.fleetOverview.uploads.map(\.received) == [3])
    }

    @Test("all chunks in but the bytes do not hash to the sha256: not complete, marked")
    func mismatch() throws {
        var world = SimWorld(scenario: .builtIn)
        let wrong = String(repeating: "0", count: 64)
        _ = try world.receiveChunk(requestId: "d", index: 0, count: 1, sha256: wrong, bytes: [7], driverId: "drv-1", digest: Self.digest)
        #expect(world.bundle(requestId: "d")?.complete == false && world.bundle(requestId: "d")?.checksumMismatch == true)
    }
}
