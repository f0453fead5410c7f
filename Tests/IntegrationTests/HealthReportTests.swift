import BackendContract
import DispatchSimCore
import DriverAPI
import Foundation
import JSONRPC
import Testing

/// The unit's health report on the wire to the real reference backend: gzipped, kept as the unit's newest, shown in
/// the fleet view as `agent.health` says it; a kill -9 reads as a crash in the next run's report.
@Suite("The health report", .ownThread)
struct HealthReportTests {
    @Test("the report reaches dispatch-sim gzipped, is the fleet view's entry for the unit, and the run after a kill -9 reports it as a crash")
    func reportOnTheWire() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let directory = TemporaryDirectory()
        let config = Harness.config(backend: sim)
        var daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: config, directory: directory)
        func receipts() async throws -> [SimStats.HealthReceipt] {
            try await http.request(.GET, "/sim/stats").decode(SimStats.self).healthReports
        }
        try await waitUntil("the first health report", timeout: .seconds(30), detail: daemon.log) { try await !receipts().isEmpty }
        let own = try daemon.client().call(Methods.agentHealth, NoParams())
        let view = try await http.request(.GET, BackendPaths.fleetHealth).decode(FleetHealthView.self)
        let unit = try #require(view.units.first { $0.unit == "drv-1" }, "\(view)")
        #expect(unit.health.daemonVersion == own.health.daemonVersion && unit.health.bootId == own.health.bootId)
        #expect(unit.health.restarts.isEmpty, "\(unit.health.restarts)")
        // Gzipped on the wire: smaller than its JSON.
        let plain = try JSONEncoder().encode(UnitHealthReport(reportId: "r", health: unit.health)).count
        let sent = try #require(try await receipts().first).bytes
        print("health report: \(sent) bytes on the wire, \(plain) bytes of JSON")
        #expect(sent > 0 && sent < plain, "\(sent) bytes sent for \(plain) of JSON")

        // kill -9: the next run's report says the last one crashed (same boot, no clean-stop mark).
        kill(daemon.pid, SIGKILL)
        daemon.process.waitUntilExit()
        let before = try await receipts().count
        daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: config, directory: directory)
        try await waitUntil("the next run's report", timeout: .seconds(30), detail: daemon.log) { try await receipts().count > before }
        let after = try await http.request(.GET, BackendPaths.fleetHealth).decode(FleetHealthView.self)
        let restarted = try #require(after.units.first { $0.unit == "drv-1" })
        #expect(restarted.health.restarts.map(\.cause) == [.crash], "\(restarted.health.restarts)")
        #expect(try daemon.client().call(Methods.agentHealth, NoParams()).health.restarts.map(\.cause) == [.crash])
        // A graceful stop and a start: a clean stop after the crash.
        _ = try daemon.stop()
        daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: config, directory: directory)
        #expect(try daemon.client().call(Methods.agentHealth, NoParams()).health.restarts.map(\.cause) == [.crash, .cleanStop])
        _ = try daemon.stop()
    }
}
