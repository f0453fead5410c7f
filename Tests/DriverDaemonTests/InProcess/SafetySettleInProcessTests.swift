@testable import DriverDaemon
import DriverAPI
import DriverDomain
import Foundation
import GPSKit
import Testing

/// The gate opens with time (3 s at or below the limit); a parked unit reads a fix only every 10 s.
@Suite("Safety gate on a slow sampler, in-process", .serialized)
struct SafetySettleInProcessTests {
    @Test("a unit started in a parked van: the reader looks again when the gate settles, so the actions open about 3 s after the first fix, not at the next 10-s sample")
    func opensWhenSettled() async throws {
        let daemon = try InProcessDaemon(backend: nil)
        try await daemon.running {
            let safety = daemon.assembly.safety
            var time = Date().timeIntervalSince1970.rounded()
            var elapsed = 0.0
            var paces: [GPSPace] = []
            // As the reader does: the next epoch read is the first one after the pause the pipeline asked for.
            while !safety.isOpen && elapsed < 30 {
                let pace = await daemon.assembly.pipeline.handIn(.fix(Fix(
                    time: time, latitude: 49.0, longitude: 12.1, speed: 0.02, track: 0, horizontalError: 5, mode: 3)))
                paces.append(pace)
                let wait = if case .pause(let seconds, _) = pace { seconds.rounded(.up) } else { 1.0 }
                time += wait
                elapsed += wait
                daemon.advance(by: wait)
            }
            #expect(safety.isOpen)
            #expect(elapsed <= 5, "the actions opened \(elapsed) s after the first fix: \(paces)")
        }
    }
}
