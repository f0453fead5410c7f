@testable import DriverDaemon
import DriverAPI
import DriverDomain
import Foundation
import GPSKit
import Testing

/// Pings held in memory reach the disk within their window whatever the reader does.
@Suite("Held pings in-process", .serialized)
struct HeldPingsInProcessTests {
    @Test("pings held after a drive's last moving sample are committed by their window while the reader rests in a pause (the reader calls housekeeping, not idle, then)")
    func heldPingsCommittedDuringAPause() async throws {
        let daemon = try InProcessDaemon(backend: nil)
        try await daemon.running {
            let pipeline = daemon.assembly.pipeline
            let recorder = try #require(daemon.assembly.recorder)
            var time = Date().timeIntervalSince1970.rounded()
            // A minute of driving north at 12 m/s, one fix a second.
            for second in 0..<60 {
                _ = await pipeline.handIn(.fix(Fix(
                    time: time, latitude: 49.0 + Double(second) * 12 / 111_320, longitude: 12.1, speed: 12, track: 0, horizontalError: 5, mode: 3)))
                time += 1
                daemon.advance(by: 1)
            }
            #expect(recorder.keptByMotion["moving", default: 0] > 0, "moving pings were recorded and written: \(recorder.keptByMotion)")
            try #require(recorder.pendingCount > 0, "the last seconds' pings are held (no backend)")
            // The reader pauses (a slow sample due later): no fix, no wait for data; only housekeeping runs.
            daemon.advance(by: recorder.movingWindow + 1)
            await pipeline.settle()
            #expect(recorder.pendingCount == 0, "\(recorder.pendingCount) pings still held past their window")
        }
    }
}
