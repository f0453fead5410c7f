import BackendContract
import DispatchSimCore
import DriverAPI
import DriverDomain
import Foundation
import JSONRPC
import NMEASynth
import Testing

/// A unit whose clock is wrong: libfaketime runs the real daemon under another wall clock (the monotonic clock
/// stays real), gpsd keeps delivering true fixes, the reference backend sits behind TLS or plain loopback.
@Suite("Time you can trust", .ownThread)
struct ClockTests {
    /// libfaketime, for LD_PRELOAD (Debian's `faketime` package).
    static let libfaketime: String? = {
        let candidates = ["x86_64-linux-gnu", "aarch64-linux-gnu", "arm-linux-gnueabihf"].map { "/usr/lib/\($0)/faketime/libfaketime.so.1" }
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }()

    static func faked(_ spec: [String: String]) throws -> [String: String] {
        let library = try #require(libfaketime, "libfaketime is missing (Debian package faketime)")
        return ["LD_PRELOAD": library, "FAKETIME_DONT_FAKE_MONOTONIC": "1"].merging(spec) { $1 }
    }

    /// A drive dated from now, replayed in real time (three sentences an epoch).
    static func realTimeGPS(_ directory: TemporaryDirectory, parkSeconds: Int = 900) throws -> GPSFake {
        let route = RoutePresets.street(parkSeconds: parkSeconds, sigma: 3, startTime: Date().timeIntervalSince1970.rounded())
        return try GPSFake(log: try Harness.synthesise(route, directory, "now.nmea"), delay: 1.0 / 3)
    }

    static func status(_ daemon: DaemonProcess) throws -> AgentStatus { try daemon.client().call(Methods.agentStatus, NoParams()) }

    @Test("booted at 2000 with gpsd feeding true fixes: stamps from GPS, the backend's certificate judged at GPS time (TLS would refuse it on the system clock, not valid until years later), every ping and transition arrives at once")
    func bootedIn2000() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let tls = try TLSFront(backendPort: sim.port)
        let directory = TemporaryDirectory()
        let fake = try Self.realTimeGPS(directory)
        let config = """
            [gps]
            watch = "continuous"
            [backend]
            url = "https://127.0.0.1:\(tls.port)"
            ca_file = "\(tls.certificate)"
            username = "rider1"
            password = "demo-password"
            """
        // At the true time: logged in over TLS, the route synced.
        var daemon = try DaemonProcess(arguments: ["--gpsd", fake.endpoint], config: config, directory: directory)
        try waitUntil("the route synced over TLS", detail: daemon.log) {
            try daemon.client().call(Methods.routeGet, NoParams()).stops.count == 4
        }
        try daemon.stop()
        let pingsBefore = try await http.locations().pings.count

        // Booted at 2000-01-01 with no real-time clock.
        daemon = try DaemonProcess(
            arguments: ["--gpsd", fake.endpoint], environment: try Self.faked(["FAKETIME": "@2000-01-01 00:00:00"]), config: config,
            directory: directory)
        try waitUntil("stamps from GPS time", detail: daemon.log) { try Self.status(daemon).clock?.source == .gps }
        let clock = try #require(try Self.status(daemon).clock)
        #expect(clock.systemClockOffset < -26 * 365 * 86400, "\(clock)")
        try waitUntil("pings recorded", detail: daemon.log) { try Self.status(daemon).gps.pingsRecorded >= 10 }
        let gps = try daemon.client().call(Methods.gpsStatus, NoParams())
        let before = Date()
        _ = try daemon.client().call(Methods.taskAccept, TaskParams(taskId: "task-1001"))
        // GPS time at the action: the last fix carried forward by its age and the time the call took.
        let gpsNow = try #require(gps.lastFix?.time) + (gps.lastFixAge ?? 0) + Date().timeIntervalSince(before)
        // The backend's certificate is not valid until years after the system clock's 2000, but it is judged at GPS time:
        // the link works at once, nothing waits for the clock to be set.
        let flushed = try daemon.client(timeout: .seconds(60)).call(Methods.outboxFlush, NoParams())
        #expect(flushed.link == .online && flushed.items == 0, "\(flushed)\n\(daemon.log.suffix(2000))")
        let recorded = try Self.status(daemon).gps.pingsRecorded
        try daemon.stop()

        // Everything arrived, stamped from GPS time, none in 2000.
        let stats = try await http.request(.GET, "/sim/stats").decode(SimStats.self)
        let acceptedUpdate = try #require(stats.statusUpdates.first { $0.taskId == "task-1001" && $0.status == .accepted })
        #expect(acceptedUpdate.timeSource == .gps)
        #expect(abs((acceptedUpdate.timestamp ?? 0) - gpsNow) <= 2, "stamped \(acceptedUpdate.timestamp ?? 0), GPS time \(gpsNow)")
        let pings = try await http.locations().pings
        #expect(pings.count - pingsBefore >= recorded, "recorded \(recorded) in 2000, the backend got \(pings.count - pingsBefore)")
        let year2001 = 978_307_200.0
        #expect(pings.allSatisfy { $0.timestamp > year2001 }, "a ping stamped on the system clock's 2000")
    }

    @Test("the wall clock steps five years ahead, then ten years back, at run time: no ping dropped, no login expired, nothing reordered")
    func wallClockSteps() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let directory = TemporaryDirectory()
        let fake = try Self.realTimeGPS(directory)
        let rc = directory.file("faketime.rc")
        try "+0\n".write(toFile: rc, atomically: true, encoding: .utf8)
        // A driver's login (no unattended credentials): an expired login would stop the uplink with auth.required.
        let config = "[gps]\nwatch = \"continuous\"\n[backend]\nurl = \"\(sim.base)\"\n"
        let daemon = try DaemonProcess(
            arguments: ["--gpsd", fake.endpoint],
            environment: try Self.faked(["FAKETIME_TIMESTAMP_FILE": rc, "FAKETIME_NO_CACHE": "1"]), config: config, directory: directory)
        _ = try daemon.client().call(Methods.authLogin, LoginParams(username: "rider1", password: "demo-password"))
        try waitUntil("the route synced", detail: daemon.log) { try daemon.client().call(Methods.routeGet, NoParams()).stops.count == 4 }
        try waitUntil("pings recorded", detail: daemon.log) { try Self.status(daemon).gps.pingsRecorded >= 5 }
        let source = try #require(try Self.status(daemon).clock?.source)
        var actionTimes: [Double] = []
        let steps: [(String, TaskParams, Method<TaskParams, TaskView>)] = [
            ("+5y", TaskParams(taskId: "task-1001"), Methods.taskAccept), ("-10y", TaskParams(taskId: "task-1001"), Methods.taskArrive),
            ("+0", TaskParams(taskId: "task-1002"), Methods.taskAccept),
        ]
        for (offset, params, method) in steps {
            try (offset + "\n").write(toFile: rc, atomically: true, encoding: .utf8)
            let pingsBefore = try Self.status(daemon).gps.pingsRecorded
            try waitUntil("pings after the step to \(offset)", detail: daemon.log) { try Self.status(daemon).gps.pingsRecorded >= pingsBefore + 3 }
            actionTimes.append(Date().timeIntervalSince1970)
            _ = try daemon.client().call(method, params)
            let status = try daemon.client(timeout: .seconds(60)).call(Methods.outboxFlush, NoParams())
            #expect(status.link == .online, "after the step to \(offset): \(status)")
            // lastSuccess is shown on the stamps' timeline, never five years off.
            if let lastSuccess = status.lastSuccess, source == .gps { #expect(abs(lastSuccess - Date().timeIntervalSince1970) < 30) }
        }
        // The receiver stops first, read to its end: a ping recorded between the count and the stop's last flush
        // made the backend's count one more once.
        _ = try Harness.readToEnd(daemon, fake: fake)
        let final = try Harness.drain(daemon)
        #expect(final.link == .online && final.deadLetters == 0)
        let gps = try daemon.client().call(Methods.gpsStatus, NoParams())
        try daemon.stop()
        let stats = try await http.request(.GET, "/sim/stats").decode(SimStats.self)
        #expect(stats.uniquePings == gps.pingsRecorded, "recorded \(gps.pingsRecorded), the backend has \(stats.uniquePings)")
        #expect(stats.statusUpdates.map(\.status) == [.accepted, .arrivedAtStore, .accepted])
        // From the driver's login on: the uplink's first look may come before it, and says "no token" (a loaded
        // machine started the uplink before the test's login arrived).
        let sinceLogin = daemon.log.components(separatedBy: "uplink: logged in").dropFirst().joined()
        #expect(!sinceLogin.isEmpty && !sinceLogin.contains("log in required"), "\(daemon.log)")
        // With the kernel unsynchronised (as on this machine) stamps come from GPS and ignore the steps (years). Within
        // 30 s: the real-time replay falls behind on a loaded machine (5.04 s once, beside a release build), and the
        // stamps with it.
        if source == .gps {
            for (update, real) in zip(stats.statusUpdates, actionTimes) {
                #expect(update.timeSource == .gps && abs((update.timestamp ?? 0) - real) < 30, "\(update) at \(real)")
            }
        }
    }
}

/// dispatch-sim behind TLS on loopback: a fresh self-signed certificate for 127.0.0.1 (valid from now) and a
/// small Python proxy that terminates TLS.
final class TLSFront {
    let port: Int
    let certificate: String
    private let process = Process()
    private let directory = TemporaryDirectory("tls-front")

    init(backendPort: Int) throws {
        certificate = directory.file("cert.pem")
        let key = directory.file("key.pem")
        let made = try runProgram("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", certificate,
            "-days", "30", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        ])
        guard made.status == 0 else { throw TestFailure("openssl failed: \(made.stderr)") }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Support/tls_proxy.py").path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, certificate, key, String(backendPort)]
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        let process = self.process
        try LongLivedSpawner.run { try process.run() }
        var line = Data()
        while let byte = try stdout.fileHandleForReading.read(upToCount: 1), let first = byte.first, first != UInt8(ascii: "\n") {
            line.append(first)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else { throw TestFailure("the TLS proxy did not start") }
        self.port = port
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
