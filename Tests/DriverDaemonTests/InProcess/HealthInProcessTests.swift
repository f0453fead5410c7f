@testable import DriverDaemon
import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import Foundation
import Testing

/// The unit's health: why earlier runs ended, the report to the backend (a newer one replacing one not sent), the
/// metrics file, and `agent.health` naming a fault.
@Suite("Unit health", .serialized)
struct HealthInProcessTests {
    static func directory() -> String {
        var template = Array("/tmp/driverd-health-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    @Test("why a run ended: a clean stop, a crash (same boot), a power cut (another boot), an update, a configuration; a day's runs kept")
    func runLog() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = RunLog(stateDirectory: directory)
        #expect(try log.begin(now: 1000, bootId: "a", updated: false).isEmpty)
        try log.end(.cleanStop)
        #expect(try log.begin(now: 2000, bootId: "a", updated: false).map(\.cause) == [.cleanStop])
        // Killed: no clean stop, the same boot.
        #expect(try log.begin(now: 3000, bootId: "a", updated: false).map(\.cause) == [.cleanStop, .crash])
        // The power went: no clean stop, and the next start is another boot.
        #expect(try log.begin(now: 4000, bootId: "b", updated: false).map(\.cause) == [.cleanStop, .crash, .powerCut])
        try log.end(.cleanStop)
        #expect(try log.begin(now: 5000, bootId: "b", updated: true).last?.cause == .update)
        try log.end(.configuration)
        let restarts = try log.begin(now: 6000, bootId: "b", updated: false)
        #expect(restarts.map(\.cause) == [.cleanStop, .crash, .powerCut, .update, .configuration])
        #expect(restarts.map(\.startedAt) == [1000, 2000, 3000, 4000, 5000])
        // A day later only the runs of the last 24 h are left.
        #expect(try log.begin(now: 6000 + 86400 - 500, bootId: "b", updated: false).map(\.startedAt) == [6000])
    }

    @Test("the metrics file's text: names and types an exporter would use; unchanged for an unchanged unit a minute later")
    func metricsText() {
        var health = HealthRulesFixture.healthy()
        let started = HealthMetrics.startTime(health, said: nil)
        let text = HealthMetrics.text(health, startTime: started)
        #expect(text.contains("# TYPE driverd_store_condition gauge\n"))
        #expect(text.contains("driverd_store_condition{condition=\"ok\"} 1\n") && text.contains("driverd_store_condition{condition=\"full\"} 0\n"))
        #expect(text.contains("driverd_restarts_last_day{cause=\"crash\"} 0\n"))
        #expect(text.contains("driverd_info{version=\"0.2.0\",kiosk_version=\"0.2.0\"} 1\n"))
        #expect(text.hasSuffix("# EOF\n"))
        #expect(text.contains("driverd_start_time_seconds \(Int(started))\n"))
        // A minute on, the wall clock a second and a half ahead of the uptime (a GPS-timed clock's jitter): the same start.
        health.generatedAt += 61.5
        health.uptimeSeconds += 60
        #expect(HealthMetrics.startTime(health, said: started) == started)
        #expect(HealthMetrics.text(health, startTime: HealthMetrics.startTime(health, said: started)) == text,
                "a minute on, nothing changed: the same file (not written again)")
        // A clock that stepped a minute moves it.
        health.generatedAt += 60
        #expect(HealthMetrics.startTime(health, said: started) == (health.generatedAt - health.uptimeSeconds).rounded())
        health.store = StoreStatus(condition: .full, path: "/d", freeBytes: 0)
        #expect(HealthMetrics.text(health, startTime: started).contains("driverd_store_condition{condition=\"full\"} 1\n"))
    }

    @Test("agent.health names a store that cannot save; the report reaches the backend, a newer one replacing one not sent; the metrics file follows")
    func reportAndView() async throws {
        let backend = StandInBackend()
        let textfile = Self.directory() + "/driverd.prom"
        defer { try? FileManager.default.removeItem(atPath: (textfile as NSString).deletingLastPathComponent) }
        let daemon = try InProcessDaemon(backend: backend) { $0.metricsTextfile = textfile }
        let store = daemon.assembly.outbox.store
        try await daemon.running {
            try await InProcessDaemonTests.routeSynced(daemon)
            let healthy = try await daemon.call(Methods.agentHealth)
            #expect(healthy.findings.allSatisfy { $0.rule != .storeFull }, "\(healthy.findings)")
            _ = try await daemon.call(Methods.outboxFlush)
            try await daemon.waitUntil("the first report at the backend") { backend.world.fleetHealth(now: 0).units.count == 1 }
            #expect(try String(contentsOfFile: textfile, encoding: .utf8).contains("driverd_store_condition{condition=\"ok\"} 1"))

            // The backend away, the store full, then read-only: each look queues a report, held in memory (the disk
            // refuses it), the newer in place of the older.
            backend.setDown("cut")
            store.injectWriteFailure(errno: ENOSPC)
            let full = try await daemon.call(Methods.agentHealth)
            #expect(full.findings.first?.rule == .storeFull && full.findings.first?.severity == .attention, "\(full.findings)")
            #expect(full.health.store.condition == .full)
            daemon.assembly.health.look()
            store.injectWriteFailure(errno: EROFS)
            daemon.assembly.health.look()
            #expect(try await daemon.call(Methods.outboxStatus).activity == 1, "one report waits: the newer replaced the older")
            #expect(try String(contentsOfFile: textfile, encoding: .utf8).contains("driverd_store_condition{condition=\"read-only\"} 1"))
            // The backend back, the store still read-only: the report goes from memory, and the office sees it.
            backend.setDown(nil)
            _ = try await daemon.call(Methods.outboxFlush)
            let view = backend.world.fleetHealth(now: Date().timeIntervalSince1970)
            #expect(view.units.first?.health.store.condition == .readOnly, "\(view.units.map(\.health.store))")
            #expect(view.units.first?.findings.map(\.rule).contains(.storeReadOnly) == true)
            #expect(try await daemon.call(Methods.outboxStatus).activity == 0)
            store.injectWriteFailure(errno: nil)
        }
    }
}

/// A healthy unit's report, for tests here (the rules' table has its own).
enum HealthRulesFixture {
    static func healthy() -> UnitHealth {
        UnitHealth(
            generatedAt: 1_796_500_000, timeSource: .ntp, daemonVersion: "0.2.0", kioskVersion: "0.2.0", bootId: "b", uptimeSeconds: 3600, onShift: true,
            restarts: [], store: StoreStatus(condition: .ok, path: "/var/lib/driverd", freeBytes: 1 << 30, reserveBytes: 4 << 20),
            queue: UnitHealth.Queue(items: 0, pings: 3, deadLetters: 0, oldestAgeSeconds: 4), gps: UnitHealth.GPS(link: .connected, lastFixAgeSeconds: 1),
            clockSource: .ntp, certificate: nil, vehicle: nil, frontEnds: 1, remoteConfigVersion: nil, logCounts: [:], peakRSSKiB: 20000,
            nextReportWithin: 1860)
    }
}
