import BackendContract
import DispatchSimCore
import DriverAPI
import Foundation
import Testing

/// A driver's shift with the power cut at random moments (`PowerCutJourney`): nothing the unit acknowledged is
/// lost or sent twice, the store stays whole, no file is torn, and pings are lost only inside the commit window.
/// `DRIVERD_POWERCUT_CUTS` sets the cuts per seed (`make soak` runs 1,000 per seed), `DRIVERD_POWERCUT_SEEDS` the seeds.
@Suite("Power cuts", .ownThread)
struct PowerCutTests {
    static let cutsPerSeed = ProcessInfo.processInfo.environment["DRIVERD_POWERCUT_CUTS"].flatMap { Int($0) } ?? 50
    /// `DRIVERD_POWERCUT_SEEDS=11` runs one seed again (a failure's), alone.
    static let seeds = ProcessInfo.processInfo.environment["DRIVERD_POWERCUT_SEEDS"].map { $0.split(separator: ",").compactMap { UInt64($0) } } ?? [11, 29]

    @Test("a shift of orders, SOS calls, logins, configuration trials and bundles through power cuts at random moments", .tags(.longest), arguments: seeds)
    func journey(seed: UInt64) throws {
        let report = try PowerCutJourney(PowerCutJourney.Settings(seed: seed, cuts: Self.cutsPerSeed)).run()
        print("power-cut soak, seed \(seed): \(report)")
        #expect(report.cuts == Self.cutsPerSeed)
        #expect(report.acknowledgedTransitions > report.cuts / 5, "the driver got on with the work: \(report)")
        #expect(report.lostAcknowledged.isEmpty, "\(report.lostAcknowledged.prefix(20))")
        #expect(report.duplicates.isEmpty, "\(report.duplicates.prefix(20))")
        #expect(report.deadLetters == 0, "dead letters: \(report.deadLetters): \(report.deadLetterAnswers.prefix(20))")
        #expect(report.integrityFailures == 0)
        #expect(report.tornFiles.isEmpty, "\(report.tornFiles.prefix(20))")
        #expect(report.pingsLostOutsideWindow.isEmpty, "\(report.pingsLostOutsideWindow.count): \(report.pingsLostOutsideWindow.prefix(20))")
    }

    /// The journey's 4 dead letters of seed 11 (2026-11-27), placed by hand: a bundle's chunks are acknowledged and
    /// their completions committed (synchronous = NORMAL, not yet on disk); the next bundle is spooled, and its
    /// directory's sync also makes the first bundle's removal durable; the power goes before anything syncs the
    /// database. When the file went with the last chunk's send, every chunk came back queued after the cut with
    /// its file gone, and each was refused ("cannot be read"): one dead letter per chunk.
    @Test("a bundle uploaded just before the next one is spooled, then the power goes: none of its chunks is refused")
    func bundleBesideTheNext() throws {
        let sim = try SimProcess(arguments: ["--seed", "11"])
        let http = SimHTTP(base: sim.base)
        let directory = TemporaryDirectory("powercut")
        let fs = try PowerCutFS(mountpoint: directory.file("state"))
        // No gpsd: no pings, so nothing but the desk's own syncs reaches the disk between the two bundles.
        let config = Harness.config(backend: sim) + "[shift]\nauto_start = true\n[diag]\nchunk_bytes = 1024\n"
        var daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: config, directory: directory)
        try waitUntil("online", detail: daemon.log) { try Harness.outbox(daemon).link == .online }
        func ask(_ id: String) throws {
            _ = try http.requestBlocking(.PUT, "/sim/requests", json: FleetRequest(requestId: id, kind: .diagnosticBundle, windowSeconds: 600))
        }
        func upload(_ id: String) throws -> FleetOverview.Upload? {
            try http.requestBlocking(.GET, "/sim/requests").decode(FleetOverview.self).uploads.first { $0.requestId == id }
        }
        try ask("diag-a")
        let spooled = fs.mountpoint + "/diagnostics/diag-a.tar.gz"
        try waitUntil("the first bundle uploaded and its spool file gone", detail: daemon.log) {
            try upload("diag-a")?.complete == true && !FileManager.default.fileExists(atPath: spooled)
        }
        let chunks = try #require(try upload("diag-a")).count
        #expect(chunks > 1, "a bundle of several chunks")

        try fs.armCut(atSyncOfDirectory: "diagnostics")
        try ask("diag-b")
        try fs.armedCut()
        try daemon.stop(signal: SIGKILL)
        try fs.mount()
        daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: config, directory: directory)
        try waitUntil("the second bundle uploaded", timeout: .seconds(120), detail: daemon.log) { try upload("diag-b")?.complete == true }
        let status = try Harness.drain(daemon)
        let refused = try daemon.client().call(Methods.outboxDeadLetters, NoParams())
        #expect(status.deadLetters == 0, "\(refused.items.map { "\($0.kind) \($0.idempotencyKey): \($0.answer)" })")
        let first = try #require(try upload("diag-a"))
        #expect(first.complete && !first.checksumMismatch, "\(first)")
        print("bundle beside the next: the first bundle in \(chunks) chunks; \(first.duplicates) came twice; dead letters \(status.deadLetters)")
        try daemon.stop()
    }
}
