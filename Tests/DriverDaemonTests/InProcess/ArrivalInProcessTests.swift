#if canImport(Glibc)
import Glibc
#endif
import BackendContract
import DispatchSimCore
import DriverAPI
@testable import DriverDaemon
import DriverDomain
import Foundation
import GPSKit
import JSONRPC
import Testing

/// Completions away from the stop and leaving a destination unfinished, in-process: fixes fed to the daemon's
/// GPS pipeline as the reader would hand them over, the backend a stand-in with the reference backend's rules.
@Suite("Arrivals in-process", .serialized)
struct ArrivalInProcessTests {
    /// The built-in world's task-1001 drop-off.
    static let customer = (lat: 49.01600, lng: 12.10050)

    /// Feeds fixes `north` metres from the customer (negative: south), one a second of receiver time.
    final class Receiver: @unchecked Sendable {
        let pipeline: TrackingPipeline
        var time = Date().timeIntervalSince1970.rounded()
        init(_ pipeline: TrackingPipeline) { self.pipeline = pipeline }

        func fix(north: Double, speed: Double) async {
            time += 1
            let fix = Fix(
                time: time, latitude: customer.lat + north / 111_320, longitude: customer.lng, speed: speed, track: 180,
                horizontalError: 8, mode: 3)
            _ = await pipeline.handIn(.fix(fix))
        }
    }

    static func journeyToDropoff(_ daemon: InProcessDaemon) async throws {
        try await daemon.waitUntil("the route synced") { try await daemon.call(Methods.routeGet).stops.count == 4 }
        for method in [Methods.taskAccept, Methods.taskArrive, Methods.taskPickup] {
            _ = try await daemon.call(method, TaskParams(taskId: "task-1001"))
        }
    }

    @Test("no fix: a delivery is allowed and marked position unknown")
    func deliveryWithoutFix() async throws {
        let backend = StandInBackend()
        let daemon = try InProcessDaemon(backend: backend)
        try await daemon.running {
            try await Self.journeyToDropoff(daemon)
            daemon.assembly.safety.setIgnition(false)
            _ = try await daemon.call(Methods.taskArrive, TaskParams(taskId: "task-1001"))
            _ = try await daemon.call(Methods.podOTP, OTPParams(taskId: "task-1001", otp: "4812"))
            _ = try await daemon.call(Methods.taskDeliver, TaskParams(taskId: "task-1001"))
            _ = try await daemon.call(Methods.outboxFlush)
            let delivered = try #require(backend.world.stats.statusUpdates.last)
            #expect(delivered.status == .delivered && delivered.position == .unknown && delivered.stopDistance == nil, "\(delivered)")
        }
    }

    @Test("left the destination undelivered: held while driving (the summary says so), shown when it stands; delivered 300 m away with a reason; the visit says it was left unfinished and departed at the crossing")
    func leftUnfinished() async throws {
        let backend = StandInBackend()
        let daemon = try InProcessDaemon(backend: backend)
        try await daemon.running {
            try await Self.journeyToDropoff(daemon)
            let events = try await daemon.subscriber([Events.stopLeftUnfinished.topic, Events.pushSummary.topic, Events.visitChanged.topic])
            let receiver = Receiver(daemon.assembly.pipeline)
            for _ in 0..<5 { await receiver.fix(north: 5, speed: 0) }
            _ = try await daemon.call(Methods.taskArrive, TaskParams(taskId: "task-1001"))
            // Away south at 10 m/s, past the 150-m exit border, without delivering.
            for second in 1...30 { await receiver.fix(north: 5 - Double(second) * 10, speed: 10) }
            try await daemon.waitUntil("the summary while driving") {
                events.all(Events.pushSummary).contains { $0.summary.contains("1 unfinished stop") }
            }
            #expect(events.all(Events.stopLeftUnfinished).isEmpty, "held while driving")
            // The van crossed the exit border by now: the visit's departure, whatever happens at the stop later.
            let crossedBy = daemon.assembly.tracker.clock.now().time
            // It stands 295 m south: the gate opens after its settle time, and the notice is shown.
            for _ in 0..<3 { await receiver.fix(north: -295, speed: 0) }
            daemon.advance(by: 3.2)
            await receiver.fix(north: -295, speed: 0)
            try await daemon.waitUntil("the notice") { !events.all(Events.stopLeftUnfinished).isEmpty }
            let notice = try #require(events.all(Events.stopLeftUnfinished).first)
            #expect(notice.kind == "STOP_LEFT_UNFINISHED" && notice.taskId == "task-1001" && notice.id < 0, "\(notice)")
            _ = try await daemon.call(Methods.eventsAck, AckParams(id: notice.id))

            _ = try await daemon.call(Methods.podOTP, OTPParams(taskId: "task-1001", otp: "4812"))
            do {
                _ = try await daemon.call(Methods.taskDeliver, TaskParams(taskId: "task-1001"))
                Issue.record("a delivery 300 m away without a reason was accepted")
            } catch let failure as RPCClient.Failure {
                guard case .server(let error) = failure else { throw failure }
                #expect(error.kind == .outsideGeofence && error.message.contains("from the stop"), "\(error)")
                #expect(error.data?["distanceMeters"] == .number("295"), "\(error)")
            }
            let delivered = try await daemon.call(Methods.taskDeliver, TaskParams(taskId: "task-1001", outsideReason: .addressWrong))
            #expect(delivered.status == .delivered)
            // Completed away from the stop: the next fix ends the visit.
            await receiver.fix(north: -295, speed: 0)
            try await daemon.waitUntil("the visit closed") {
                try await daemon.call(Methods.visitsList).visits.first?.state != "open"
            }
            _ = try await daemon.call(Methods.outboxFlush)
            let update = try #require(backend.world.stats.statusUpdates.last)
            #expect(update.status == .delivered && update.outsideReason == .addressWrong, "\(update)")
            #expect((280...310).contains(update.stopDistance ?? 0), "\(update)")
            // The pickup's arrival was tapped without a fix: no visit there.
            let visits = backend.world.visits.map(\.report)
            #expect(visits.map(\.stopId) == ["task-1001-dropoff"], "\(visits)")
            let dropoff = try #require(visits.first { $0.stopId == "task-1001-dropoff" })
            // Who opened the visit is a race here, not the point: the driver's tap, or the geofence when the motion
            // detector already calls the unit stationary at the first fixes inside (seen in 3 of 4 runs of this suite
            // alone, on b06fe85 too), in which case the tap confirms the detected arrival. Both are right.
            #expect(dropoff.leftUnfinished && (dropoff.arrivalDistance ?? 99) <= 10, "\(dropoff)")
            #expect([TransitionSource.driver, .geofence].contains(dropoff.arrivalSource), "\(dropoff)")
            // Departed when it crossed the border, not when the delivery was made away from the stop (the settle time
            // and the waits after the crossing moved the clock on by more than 3 s).
            #expect(dropoff.departedAt <= crossedBy && dropoff.dwellSeconds == (dropoff.departedAt - dropoff.arrivedAt).rounded(), "\(dropoff), crossed by \(crossedBy)")
            #expect(daemon.assembly.tracker.clock.now().time - dropoff.departedAt >= 3, "\(dropoff)")
            // Front ends heard the visit open, be left unfinished, and close.
            let changes = events.all(Events.visitChanged).map { "\($0.state) \($0.leftUnfinished) \($0.dwellSeconds != nil)" }
            #expect(changes == ["open false false", "open true false", "queued true true"], "\(changes)")
        }
    }
}
