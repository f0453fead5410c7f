@testable import DriverDaemon
import DriverAPI
import DriverDomain
import Foundation
import GPSKit
import Testing

/// A batch the link lost rides with the next one under its own id (`LocationBatch.carried`); a backend that does not
/// take carried batches gets each alone. Every ping arrives once either way.
@Suite("Carried batches in-process", .serialized)
struct CarriedBatchesInProcessTests {
    /// Drives north at 12 m/s for `seconds`, a fix a second, letting the daemon's time pass in hundredths (its timers
    /// fire in order, the uplink's requests run between).
    static func drive(_ daemon: InProcessDaemon, seconds: Int, from time: inout Double) async throws {
        for _ in 0..<seconds {
            _ = await daemon.assembly.pipeline.handIn(.fix(Fix(
                time: time, latitude: 49.0 + (time - 1_800_000_000) * 12 / 111_320, longitude: 12.1, speed: 12, track: 0, horizontalError: 5, mode: 3)))
            time += 1
            for _ in 0..<100 {
                daemon.advance(by: 0.01)
                try await Task.sleep(for: .milliseconds(1))
            }
        }
    }

    /// Every recorded ping at the backend once: the recorder holds none, the disk none, and the backend's unique pings
    /// are the recorder's.
    static func allDelivered(_ daemon: InProcessDaemon, _ backend: StandInBackend) async throws {
        let recorder = try #require(daemon.assembly.recorder)
        try await daemon.waitUntil("every ping delivered") {
            guard recorder.pendingCount == 0 else { return false }
            return try await daemon.call(Methods.outboxStatus).pings == 0
        }
        #expect(backend.world.stats.uniquePings == recorder.kept, "recorded \(recorder.kept), the backend has \(backend.world.stats.uniquePings)")
    }

    @Test("a lost batch goes with the next request, stored once whether it arrived or not; lost twice, both ride with the third")
    func lostBatchesRide() async throws {
        let backend = StandInBackend()
        let daemon = try InProcessDaemon(backend: backend)
        try await daemon.running {
            var time = 1_800_000_000.0
            try await Self.drive(daemon, seconds: 12, from: &time)
            #expect(backend.world.stats.batches >= 2)
            let before = backend.world.stats
            // Lost before the backend saw it, then the request carrying it lost after the backend stored both.
            backend.loseLocationRequests([false, true])
            try await Self.drive(daemon, seconds: 20, from: &time)
            let after = backend.world.stats
            // Those stored by the request whose answer was lost came again, carried: the two lost ones, and pings a window
            // wrote to disk meanwhile, as a batch of their own, when the attempts fell that way.
            #expect((2...3).contains(after.duplicateBatches - before.duplicateBatches), "\(after.duplicateBatches - before.duplicateBatches) duplicates")
            // The second request stored the first lost batch and its own in one instant; the third, its own besides them.
            let log = after.batchLog.dropFirst(before.batchLog.count)
            #expect(zip(log, log.dropFirst()).contains { $0.time == $1.time && $0.pings > 0 }, "\(log.map(\.time))")
            #expect(daemon.assembly.uplink?.state.withLock { $0.backendTakesCarried } == true)
            try await Self.allDelivered(daemon, backend)
        }
    }

    @Test("a backend that ignores carried batches: the unit finds out from its ack and sends each lost batch alone; none lost")
    func olderBackend() async throws {
        let backend = StandInBackend()
        backend.takeCarried(false)
        let daemon = try InProcessDaemon(backend: backend)
        try await daemon.running {
            var time = 1_800_000_000.0
            try await Self.drive(daemon, seconds: 12, from: &time)
            backend.loseLocationRequests([false])
            try await Self.drive(daemon, seconds: 20, from: &time)
            #expect(daemon.assembly.uplink?.state.withLock { $0.backendTakesCarried } == false)
            // Another loss after it found out: the lost batch goes alone, first.
            backend.loseLocationRequests([true])
            try await Self.drive(daemon, seconds: 20, from: &time)
            try await Self.allDelivered(daemon, backend)
            #expect(backend.world.stats.duplicateBatches == 1, "the batch stored with the lost answer, sent again alone")
        }
    }
}
