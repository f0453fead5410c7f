import BackendContract
import Crypto
import DispatchSimCore
import DriverAPI
import Foundation
import JSONRPC
import NMEASynth
import Testing

/// What the fleet asks from afar, end to end: dispatch-sim pushes requests, the real driverd answers each once
/// through its outbox; a diagnostic bundle goes up in chunks through a lossy link and kill -9s.
@Suite("Fleet requests", .ownThread)
struct FleetRequestTests {
    static func overview(_ http: SimHTTP) async throws -> FleetOverview { try await http.request(.GET, "/sim/requests").decode(FleetOverview.self) }

    static func answer(_ http: SimHTTP, _ requestId: String, detail: @autoclosure () -> String) async throws -> FleetRequestAck {
        var found: FleetRequestAck?
        try await waitUntil("the answer to \(requestId)", timeout: .seconds(60), detail: detail()) {
            found = try await overview(http).acks.map(\.ack).first { $0.requestId == requestId }
            return found != nil
        }
        return found!
    }

    @Test("a requested diagnostic bundle arrives once and whole (its sha256) through 20 % lost requests and two kill -9s mid-upload, with no customer data of the test world")
    func bundle() async throws {
        let sim = try SimProcess(arguments: ["--seed", "11"])
        let http = SimHTTP(base: sim.base)
        let directory = TemporaryDirectory()
        let config = Harness.config(backend: sim) + """
            [shift]
            auto_start = true
            [uplink]
            stationary_batch_seconds = 2
            [diag]
            chunk_bytes = 256
            """
        var daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: config, directory: directory)
        // The route first: names, phones and addresses are in the unit, and must stay out of the bundle.
        try waitUntil("the route synced", detail: daemon.log) {
            try daemon.client().call(Methods.routeGet, NoParams()).tasks.contains { $0.id == "task-1001" }
        }
        // The upload is held (every chunk answered 503) until the test watches it without awaiting: a suspended
        // test task may resume long after, behind the suite's other work, and find the upload over.
        _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(errorRate: 1, pathPrefix: "/api/v1/rider/diagnostics"))
        _ = try await http.request(.PUT, "/sim/requests", json: FleetRequest(requestId: "diag-1", kind: .diagnosticBundle, windowSeconds: 3600))
        let ack = try await Self.answer(http, "diag-1", detail: daemon.log)
        #expect(ack.status == .done, "\(ack)")
        let chunks = try #require(ack.chunks)
        #expect(chunks >= 6, "\(ack)")
        // From here blocking calls only. A slow, lossy link: 300 ms a chunk, a tenth lost before and a tenth after
        // handling; the held chunks go at once (a flush overrides the backoff the 503s caused).
        _ = try http.requestBlocking(
            .PUT, "/sim/faults", json: FaultPlan(dropBeforeRate: 0.1, dropAfterRate: 0.1, latencyMs: 300, pathPrefix: "/api/v1/rider/diagnostics"))
        let socket = daemon.socketPath
        Thread { _ = try? RPCClient(socketPath: socket, timeout: .seconds(120)).call(Methods.outboxFlush, NoParams()) }.start()
        // Two kills while chunks are on their way, seen in the unit's own queue.
        for threshold in [1, chunks / 2] {
            let deadline = ContinuousClock.now + .seconds(60)
            var remaining = chunks
            while ContinuousClock.now < deadline {
                remaining = try Harness.outbox(daemon).activity ?? 0
                if chunks - remaining >= threshold { break }
                usleep(20_000)
            }
            #expect(remaining > 0 && chunks - remaining >= threshold, "\(remaining) of \(chunks) chunks left at the kill")
            try daemon.stop(signal: SIGKILL)
            daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: config, directory: directory)
        }
        var upload: FleetOverview.Upload?
        try await waitUntil("the bundle complete", timeout: .seconds(120), detail: daemon.log) {
            upload = try await Self.overview(http).uploads.first { $0.requestId == "diag-1" }
            return upload?.complete == true
        }
        let overview = try await Self.overview(http)
        #expect(overview.acks.filter { $0.ack.requestId == "diag-1" }.count == 1)
        #expect(upload?.checksumMismatch == false && upload?.bytes == ack.bundleBytes)
        print("bundle: \(ack.bundleBytes ?? 0) bytes in \(chunks) chunks; \(upload?.duplicates ?? 0) chunks came twice")
        let bytes = try await http.request(.GET, "/sim/diagnostics/diag-1").body
        #expect(SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() == ack.bundleSHA256)

        // What is in it: the report, the configuration (redacted) and the journal; no customer data.
        let archive = directory.file("bundle.tar.gz")
        try bytes.write(to: URL(fileURLWithPath: archive))
        let unpacked = directory.file("unpacked")
        try FileManager.default.createDirectory(atPath: unpacked, withIntermediateDirectories: true)
        let tar = try runProgram("/bin/tar", ["-xzf", archive, "-C", unpacked])
        #expect(tar.status == 0, "\(tar.stderr)")
        let root = try #require(try FileManager.default.contentsOfDirectory(atPath: unpacked).first)
        let files = try FileManager.default.contentsOfDirectory(atPath: unpacked + "/" + root).sorted()
        #expect(files == ["driverd.toml", "effective-config.toml", "journal.txt", "report.json", "report.txt"])
        let text = try files.map { try String(contentsOfFile: unpacked + "/" + root + "/" + $0, encoding: .utf8) }.joined(separator: "\n")
        #expect(text.contains("driverd 0.") && text.contains("<redacted>"))
        for secret in ["A. Customer", "B. Customer", "+49 151 0000001", "+49 151 0000002", "4812", "demo-password", "Dachauplatz", "Maximilian"] {
            #expect(!text.contains(secret), "the bundle holds \(secret)")
        }
        try daemon.stop()
    }

    @Test("a position report without a fix is refused with the reason; a log level holds until its expiry; each request is answered once")
    func positionAndLogLevel() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: Harness.config(backend: sim) + "[shift]\nauto_start = true\n")
        try waitUntil("online", detail: daemon.log) { try Harness.outbox(daemon).link == .online }
        _ = try await http.request(.PUT, "/sim/requests", json: FleetRequest(requestId: "pos-1", kind: .positionReport))
        let position = try await Self.answer(http, "pos-1", detail: daemon.log)
        #expect(position.status == .refused && position.detail?.contains("no fix") == true && position.position == nil, "\(position)")

        _ = try await http.request(.PUT, "/sim/requests", json: FleetRequest(requestId: "log-1", kind: .logLevel, logLevel: "debug", expiresInSeconds: 3))
        let level = try await Self.answer(http, "log-1", detail: daemon.log)
        #expect(level.status == .done && level.detail?.contains("debug for 3 s") == true, "\(level)")
        // Its return, after the set, in the daemon's own words (timing-free: this task may resume late); then the
        // level it has is info again (setting the level reveals the previous one).
        try waitUntil("the level back to info", timeout: .seconds(60), detail: daemon.log) { daemon.log.contains("log level back to info") }
        let log = daemon.log
        let set = try #require(log.range(of: "fleet request LOG_LEVEL log-1: DONE (debug for 3 s"), "\(log)")
        let back = try #require(log.range(of: "log level back to info after the fleet's 3 s of debug"))
        #expect(set.upperBound <= back.lowerBound)
        #expect(try daemon.client().call(Methods.agentSetLogLevel, SetLogLevelParams(level: .info)).previous == .info)

        _ = try await http.request(.PUT, "/sim/requests", json: FleetRequest(requestId: "log-2", kind: .logLevel, logLevel: "loud"))
        let refused = try await Self.answer(http, "log-2", detail: daemon.log)
        #expect(refused.status == .refused && refused.detail?.contains("logLevel must be one of") == true)
        // The same request again (a push replayed) is not answered twice.
        _ = try await http.request(.PUT, "/sim/requests", json: FleetRequest(requestId: "pos-1", kind: .positionReport))
        _ = try await http.request(.PUT, "/sim/requests", json: FleetRequest(requestId: "pos-2", kind: .positionReport))
        _ = try await Self.answer(http, "pos-2", detail: daemon.log)
        #expect(try await Self.overview(http).acks.filter { $0.ack.requestId == "pos-1" }.count == 1)
        try daemon.stop()
    }

    @Test("a position report with a fix: DONE with the latest accepted fix")
    func positionWithFix() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let directory = TemporaryDirectory()
        let fake = try GPSFake(log: try Harness.synthesise(RoutePresets.parked(seconds: 600), directory), delay: 0.05)
        let daemon = try DaemonProcess(
            arguments: ["--gpsd", fake.endpoint], config: Harness.config(backend: sim) + "[shift]\nauto_start = true\n", directory: directory)
        let (gps, _) = try Harness.waitFor(daemon) { $0.lastFix != nil && $0.link == .connected }
        let fix = try #require(gps.lastFix)
        try waitUntil("online", detail: daemon.log) { try Harness.outbox(daemon).link == .online }
        _ = try await http.request(.PUT, "/sim/requests", json: FleetRequest(requestId: "pos-fix", kind: .positionReport))
        let answer = try await Self.answer(http, "pos-fix", detail: daemon.log)
        let position = try #require(answer.position, "\(answer)")
        #expect(answer.status == .done && answer.positionTime != nil)
        // The parked receiver scatters a few metres: the report is where the unit stands.
        #expect(abs(position.lat - fix.latitude) < 0.001 && abs(position.lng - fix.longitude) < 0.001, "\(position) vs \(fix)")
        try daemon.stop()
    }
}
