import BackendContract
@testable import DispatchSimCore
import DriverAPI
import Foundation
import Testing

/// The reference backend's fleet view: each unit's newest report kept, the units needing attention first with their
/// reasons, silence judged by the unit's own promise, and the page an operator reads.
@Suite("Fleet health")
struct FleetHealthTests {
    static func report(_ id: String, at time: Double, _ change: (inout UnitHealth) -> Void = { _ in }) -> UnitHealthReport {
        var health = UnitHealth(
            generatedAt: time, timeSource: .ntp, daemonVersion: "0.1.0", kioskVersion: nil, bootId: nil, uptimeSeconds: 60, onShift: true,
            restarts: [], store: StoreStatus(condition: .ok, path: "/var/lib/driverd", freeBytes: 1 << 30, reserveBytes: 4 << 20),
            queue: UnitHealth.Queue(items: 0, pings: 0, deadLetters: 0, oldestAgeSeconds: nil), gps: UnitHealth.GPS(link: .connected, lastFixAgeSeconds: 1),
            clockSource: .ntp, certificate: nil, vehicle: nil, frontEnds: 0, remoteConfigVersion: nil, logCounts: [:], peakRSSKiB: nil,
            nextReportWithin: 120)
        change(&health)
        return UnitHealthReport(reportId: id, health: health)
    }

    static func world() -> SimWorld {
        SimWorld(scenario: Scenario(drivers: (1...3).map { Scenario.Driver(id: "drv-\($0)", username: "rider\($0)", password: "pw") }, tasks: []))
    }

    @Test("the newest report is kept (a late older one is taken, not kept); a key is idempotent; an unknown driver is refused")
    func keepsNewest() {
        var world = Self.world()
        #expect(world.recordHealth(Self.report("r2", at: 200), driverId: "drv-1", idempotencyKey: "r2", bodyDigest: "a", now: 200).outcome == .accepted(ReportAccepted(id: "r2", receivedAt: 200)))
        _ = world.recordHealth(Self.report("r1", at: 100) { $0.store.condition = .full }, driverId: "drv-1", idempotencyKey: "r1", bodyDigest: "b", now: 210)
        #expect(world.fleetHealth(now: 220).units.first?.health.store.condition == .ok)
        #expect(world.recordHealth(Self.report("r2", at: 200), driverId: "drv-1", idempotencyKey: "r2", bodyDigest: "a", now: 230).replayed)
        #expect(world.recordHealth(Self.report("x", at: 1), driverId: "drv-9", idempotencyKey: "x", bodyDigest: "c", now: 1).outcome == .notFound)
    }

    @Test("units needing attention first, with their reasons; silence judged by each unit's promise; the page says it in words")
    func viewAndPage() {
        var world = Self.world()
        _ = world.recordHealth(Self.report("a", at: 1000), driverId: "drv-1", idempotencyKey: "a", bodyDigest: "a", now: 1000)
        _ = world.recordHealth(Self.report("b", at: 1000) { $0.store = StoreStatus(condition: .full, path: "/var/lib/driverd", freeBytes: 0) },
                               driverId: "drv-2", idempotencyKey: "b", bodyDigest: "b", now: 1000)
        _ = world.recordHealth(Self.report("c", at: 800), driverId: "drv-3", idempotencyKey: "c", bodyDigest: "c", now: 800)
        // drv-1 sent a batch since; drv-3 said "within 120 s" at 800 and has been silent since.
        world.lastReportAt["drv-1"] = 1090
        let view = world.fleetHealth(now: 1100)
        #expect(view.units.map(\.unit) == ["drv-2", "drv-3", "drv-1"])
        #expect(view.units[0].findings.map(\.rule) == [.storeFull])
        #expect(view.units[1].findings.map(\.rule) == [.silent] && view.units[1].findings[0].words == "silent for 5 min (it promised a report within 2 min)")
        #expect(view.units[2].findings.isEmpty && view.units[2].lastHeard == 1090)
        let page = FleetPage.html(view)
        #expect(page.contains("<title>Fleet health: 2 of 3 units need attention</title>"))
        #expect(page.contains("<li>storage full (0.0 MB free): this unit cannot save; free space on /var/lib/driverd</li>"))
        #expect(page.range(of: "drv-2")!.lowerBound < page.range(of: "drv-1")!.lowerBound)
        #expect(FleetPage.escape("<b>&\"") == "&lt;b&gt;&amp;&quot;")
        // Units in the order a person reads their names: drv-2 before drv-10.
        let names = ["drv-10", "drv-2", "van", "drv-1", "drv-", "drv-9"]
        #expect(names.sorted { FleetHealthView.readingOrder($0) < FleetHealthView.readingOrder($1) } == ["drv-", "drv-1", "drv-2", "drv-9", "drv-10", "van"])
    }
}
