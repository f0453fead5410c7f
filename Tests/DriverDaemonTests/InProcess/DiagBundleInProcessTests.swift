import BackendContract
import DispatchSimCore
@testable import DriverDaemon
import DriverDomain
@testable import DriverStore
import Foundation
import Testing

/// A diagnostic bundle the fleet asked for, spooled and sent in chunks through the uplink's own send path, against
/// the reference backend's rules (a chunk sent again is stored once).
@Suite("A fleet's diagnostic bundle in-process", .serialized)
struct DiagBundleInProcessTests {
    /// 3.5 chunks of 1,024 bytes that differ from chunk to chunk.
    static let bundle = Data((0..<3_584).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) })

    static func daemon(_ backend: StandInBackend) throws -> InProcessDaemon {
        try InProcessDaemon(backend: backend, configure: { $0.diagChunkBytes = 1024 }, bundleMaker: { _, _, _ in Self.bundle })
    }

    static func spooled(_ daemon: InProcessDaemon) throws -> [String] {
        let spool = daemon.directory + "/diagnostics"
        guard FileManager.default.fileExists(atPath: spool) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: spool)
    }

    @Test("the last chunk sent again after a crash lost its completion is a replay, not a dead letter; the bundle's file goes once no chunk is queued")
    func lastChunkAgainAfterACrash() async throws {
        let backend = StandInBackend()
        let daemon = try Self.daemon(backend)
        let uplink = try #require(daemon.assembly.uplink)
        let outbox = daemon.assembly.outbox
        let token = try await backend.login(username: "rider1", password: "demo-password").accessToken
        await daemon.assembly.fleetRequests.handle(FleetRequest(requestId: "diag-crash", kind: .diagnosticBundle, windowSeconds: 600))
        #expect(try Self.spooled(daemon) == ["diag-crash.tar.gz"])

        var sent = 0
        while let item = try outbox.headItems().first(where: { $0.kind == .diagChunk }) {
            let chunk = try JSONDecoder().decode(DiagChunkItem.self, from: item.payload)
            if chunk.index == chunk.count - 1 {
                // The chunk reaches the backend, then the process dies before its completion is committed: the item
                // is still queued at the next start, and is sent again.
                _ = try await #require(uplink.handler(of: .diagChunk)).send(item, backend, token)
                #expect(try Self.spooled(daemon) == ["diag-crash.tar.gz"], "the bundle's file is kept while its last chunk is queued")
            }
            try await uplink.send(item, token: token)
            sent += 1
        }
        #expect(sent == 4)
        let dead = try outbox.deadItems()
        #expect(dead.isEmpty, "\(dead.map(\.backendAnswer))")
        let upload = try #require(backend.world.bundle(requestId: "diag-crash"))
        #expect(upload.complete && upload.duplicates == 1 && upload.bytes == Array(Self.bundle))
        #expect(try Self.spooled(daemon).isEmpty, "the sent bundle's file is removed")
    }

    @Test("a spooled bundle no queued chunk needs (sent before a crash took its removal) is removed at the next start; one still queued is kept")
    func unneededBundleRemovedAtStart() async throws {
        let backend = StandInBackend()
        let daemon = try Self.daemon(backend)
        await daemon.assembly.fleetRequests.handle(FleetRequest(requestId: "diag-kept", kind: .diagnosticBundle, windowSeconds: 600))
        let spool = daemon.directory + "/diagnostics"
        try Data("sent before the crash".utf8).write(to: URL(fileURLWithPath: spool + "/diag-sent.tar.gz"))
        try Data("torn".utf8).write(to: URL(fileURLWithPath: spool + "/diag-torn.tar.gz.partial"))

        // The next start: the assembly is made again over the same state directory.
        var config = DaemonConfig()
        config.stateDirectory = daemon.directory
        config.socketPath = daemon.directory + "/driverd.sock"
        config.diagChunkBytes = 1024
        let restarted = try DaemonAssembly.make(.init(
            config: config, bundleMaker: { _, _, _ in Self.bundle }, store: daemon.assembly.outbox.store, backend: backend,
            webSocket: nil, clock: DaemonClock(time: daemon.time), fixSource: .handedIn))
        #expect(try Self.spooled(daemon) == ["diag-kept.tar.gz"])
        #expect(try restarted.outbox.pendingFiles(of: .diagChunk).count == 4)
    }
}
