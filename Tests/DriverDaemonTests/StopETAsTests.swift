import BackendContract
import DriverAPI
@testable import DriverDaemon
import DriverDomain
import Testing

/// The stops' ETAs as a value: the backend's while fresh, counted down; the local one from the fix otherwise.
@Suite("Stop ETAs")
struct StopETAsTests {
    static let task = try! LocalTask(backend: RouteMergeTests.remote("t1", .pickedUp), now: 0)
    static var dropoff: Stop { task.detail.stops[1] }
    static let fix = Fix(time: 1000, latitude: 48.99, longitude: 12.0, speed: 10, track: 0, horizontalError: 5, mode: 3)

    @Test("the backend's ETA counts down from its fetch and stands 90 s; after that, or for another stop, the unit's own from the fix")
    func serverThenLocal() {
        var etas = StopETAs()
        etas.store(ETAResponse(taskId: "t1", stopId: Self.dropoff.id, etaSeconds: 300, distanceMeters: 2000, positionTimestamp: nil, computedAt: 50), monotonic: 10)
        let fresh = etas.eta(to: Self.dropoff, of: Self.task, position: (Self.fix, 10), monotonic: 40, now: 500)
        #expect(fresh?.source == "server" && fresh?.seconds == 270 && fresh?.computedAt == 50)
        let stale = etas.eta(to: Self.dropoff, of: Self.task, position: (Self.fix, 10), monotonic: 101, now: 500)
        #expect(stale?.source == "local" && stale?.computedAt == 500)
        #expect((stale?.distanceMeters ?? 0) > 1000, "about 2.4 km to the drop-off: \(String(describing: stale))")
        let pickup = etas.eta(to: Self.task.detail.stops[0], of: Self.task, position: (Self.fix, 10), monotonic: 40, now: 500)
        #expect(pickup?.source == "local", "the backend's estimate is for the drop-off")
        #expect(etas.eta(to: Self.task.detail.stops[0], of: Self.task, position: (nil, nil), monotonic: 40, now: 500) == nil, "no fix, no local ETA")
        etas.removeAll()
        #expect(etas.eta(to: Self.dropoff, of: Self.task, position: (Self.fix, 10), monotonic: 40, now: 500)?.source == "local")
    }

    @Test("a planned order's ETAs add up stop after stop, from the fix or, without one, from the first stop")
    func planned() {
        let stops = Self.task.detail.stops
        let fromFix = StopETAs.planned(stops, position: (Self.fix, 10))
        #expect(fromFix.map(\.stopId) == stops.map(\.id))
        #expect(fromFix[0].etaSeconds > 0 && fromFix[1].etaSeconds > fromFix[0].etaSeconds)
        let withoutFix = StopETAs.planned(stops, position: (nil, nil))
        #expect(withoutFix[0].etaSeconds == 0, "the first stop is where the plan starts")
    }
}
