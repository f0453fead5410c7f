import AsyncHTTPClient
import BackendContract
import DispatchSimCore
import DriverAPI
import Foundation
import NIOSSL
import Testing

/// Each unit its own identity: enrolment with a fleet's claim token, then mutual TLS, against dispatch-sim as the
/// fleet's CA (HTTPS, `--tls-dir`).
@Suite("Unit identity and mutual TLS", .ownThread)
struct IdentityTests {
    /// A dispatch-sim serving HTTPS as the fleet's CA, and an HTTP client that trusts it (no certificate of its own).
    struct Fleet {
        let ca: TemporaryDirectory
        let sim: SimProcess
        let client: HTTPClient
        var http: SimHTTP { SimHTTP(base: sim.base, client: client) }

        init(claimUses: Int = 1000, certificateSeconds: Int = 30 * 86400) throws {
            ca = TemporaryDirectory("fleet-ca")
            sim = try SimProcess(arguments: [
                "--tls-dir", ca.path, "--claim-token", "fleet-claim", "--claim-uses", String(claimUses), "--unit-cert-seconds", String(certificateSeconds),
            ])
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(ca.file("ca.pem"))
            client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        }

        func config(claimToken: String = "fleet-claim") -> String {
            """
            [gps]
            watch = "continuous"
            [backend]
            url = "\(sim.base)"
            ca_file = "\(ca.file("ca.pem"))"
            claim_token = "\(claimToken)"
            username = "rider1"
            password = "demo-password"

            """
        }

        /// Runs `body` with a fleet, and shuts its client down however `body` ends.
        static func with(claimUses: Int = 1000, certificateSeconds: Int = 30 * 86400, _ body: (Fleet) async throws -> Void) async throws {
            let fleet = try Fleet(claimUses: claimUses, certificateSeconds: certificateSeconds)
            do {
                try await body(fleet)
            } catch {
                try await fleet.client.shutdown()
                throw error
            }
            try await fleet.client.shutdown()
        }
    }

    static func identity(_ daemon: DaemonProcess) throws -> UnitIdentityStatus? {
        try daemon.client().call(Methods.agentStatus, NoParams()).identity
    }

    /// Waits until `daemon` is enrolled; its identity then.
    @discardableResult
    static func enrolled(_ daemon: DaemonProcess) throws -> UnitIdentityStatus {
        try waitUntil("enrolled", detail: daemon.log) { try Self.identity(daemon)?.state == .enrolled }
        return try #require(try Self.identity(daemon))
    }

    /// Everything `UplinkTests.queueJourney` queued reaches the backend over mutual TLS (nothing goes without the
    /// certificate once enrolled), and the WebSocket opens (its upgrade needs the certificate too).
    static func journeyOverMutualTLS(_ daemon: DaemonProcess, _ fleet: Fleet, state: String) async throws {
        #expect(try Harness.drain(daemon).deadLetters == 1)
        try UplinkTests.checkJourney(try await fleet.http.request(.GET, "/sim/stats").decode(SimStats.self), state: state)
        try await waitUntil("the WebSocket open over mutual TLS", detail: daemon.log) {
            try await fleet.http.request(.GET, "/sim/stats").decode(SimStats.self).webSockets == 1
        }
    }

    /// A unit enrolled in `directory`, stopped again: its identity.
    static func enrolUnit(_ fleet: Fleet, in directory: TemporaryDirectory) throws -> UnitIdentityStatus {
        let daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: fleet.config(), directory: directory)
        let identity = try enrolled(daemon)
        try daemon.stop()
        return identity
    }

    @Test("a unit enrols with the fleet's claim token: its key stays on the unit (0600), its certificate names it, every request and the WebSocket present it; a request without one is refused 403 CERTIFICATE_REQUIRED; a restart presents the same certificate without enrolling again")
    func enrolsAndPresents() async throws {
        try await Fleet.with { fleet in try await Self.enrolsAndPresents(fleet) }
    }

    static func enrolsAndPresents(_ fleet: Fleet) async throws {
        let directory = TemporaryDirectory()
        try UplinkTests.queueJourney(in: directory.file("state"))
        var daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: fleet.config(), directory: directory)
        let enrolled = try Self.enrolled(daemon)
        #expect(enrolled.subject?.hasPrefix("CN=driverd-") == true && (enrolled.serial?.count ?? 0) >= 16)
        #expect((enrolled.notAfter ?? 0) > Date().timeIntervalSince1970 + 29 * 86400)
        let key = try FileManager.default.attributesOfItem(atPath: directory.file("state/identity/unit-key.pem"))
        #expect((key[.posixPermissions] as? Int) == 0o600)
        let chain = try String(contentsOfFile: directory.file("state/identity/unit-chain.pem"), encoding: .utf8)
        #expect(chain.contains("BEGIN CERTIFICATE") && !chain.contains("PRIVATE"))
        try await Self.journeyOverMutualTLS(daemon, fleet, state: directory.file("state"))
        // A request without a certificate (refused before its token is looked at; the login is refused alike).
        let stranger = try await fleet.http.request(.GET, BackendPaths.activeTasks, token: "any")
        #expect(try await fleet.http.request(.POST, BackendPaths.login, json: LoginRequest(username: "rider1", password: "demo-password")).status == 403)
        #expect(stranger.status == 403)
        #expect(try stranger.decode(BackendErrorBody.self).error.code == .certificateRequired)
        #expect(daemon.log.contains("enrolled: the unit presents its own certificate"), "\(daemon.log.suffix(2000))")
        // The identity in driverctl's words, status and diag alike.
        for command in ["status", "diag"] {
            let shown = try runProgram(Binaries.path("driverctl"), ["--socket", daemon.socketPath, command])
            #expect(shown.stdout.contains("unit      enrolled as \(enrolled.subject ?? "?"), serial \(enrolled.serial ?? "?")"), "\(shown.stdout)")
        }

        try daemon.stop()
        daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: fleet.config(claimToken: ""), directory: directory)
        try waitUntil("the same identity after a restart", detail: daemon.log) { try Self.identity(daemon) == enrolled }
        #expect(daemon.log.contains("presenting the unit's certificate") && !daemon.log.contains("enrolled:"), "\(daemon.log.suffix(2000))")
        try daemon.stop()
    }

    @Test("a unit with a TPM (swtpm) makes its key in it: the key file holds only what that TPM can use, no private key; it enrols, every request and the WebSocket present the certificate (the TPM signs each handshake), and a restart loads the same key")
    func keyInTheTPM() async throws {
        try await Fleet.with { fleet in
            let directory = TemporaryDirectory()
            let tpm = try SoftwareTPMProcess(directory: directory)
            try UplinkTests.queueJourney(in: directory.file("state"))
            let config = fleet.config() + "tpm = \"\(tpm.tcti)\"\n"
            var daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: config, directory: directory)
            let enrolled = try Self.enrolled(daemon)
            #expect(daemon.log.contains("enrolled: the unit presents its own certificate from now on (its key: the TPM at swtpm:"), "\(daemon.log.suffix(2000))")
            let stored = try #require(FileManager.default.contents(atPath: directory.file("state/identity/unit-key.tpm")))
            #expect(!FileManager.default.fileExists(atPath: directory.file("state/identity/unit-key.pem")))
            #expect(!String(decoding: stored, as: UTF8.self).contains("PRIVATE KEY") && stored.count < 1000)
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.file("state/identity/unit-key.tpm"))
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            try await Self.journeyOverMutualTLS(daemon, fleet, state: directory.file("state"))
            try daemon.stop()
            try await waitUntil("the WebSocket closed") { try await fleet.http.request(.GET, "/sim/stats").decode(SimStats.self).webSockets == 0 }

            daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: config, directory: directory)
            try waitUntil("the same identity after a restart", detail: daemon.log) { try Self.identity(daemon) == enrolled }
            #expect(daemon.log.contains("presenting the unit's certificate (its key: the TPM at swtpm:"), "\(daemon.log.suffix(2000))")
            // The WebSocket's upgrade needs the certificate: the TPM signed the new connection's handshake.
            try await waitUntil("the WebSocket open again", detail: daemon.log) {
                try await fleet.http.request(.GET, "/sim/stats").decode(SimStats.self).webSockets == 1
            }
            #expect(!daemon.log.contains("CERTIFICATE_REQUIRED"), "\(daemon.log.suffix(2000))")
            try daemon.stop()
        }
    }

    @Test("the unit's clock at 2040 and at 1970, not trusted (no GPS time, the kernel unsynchronised): its certificate is neither renewed nor dropped on that clock; at 2040 it is presented; at 1970 the backend's certificate (not valid yet on that clock) is judged by the fleet's CA and the time this release knows, everything queued goes, and a backend the CA never signed is refused with the reason")
    func untrustedClock() async throws {
        try await Fleet.with { fleet in
            let directory = TemporaryDirectory()
            let enrolled = try Self.enrolUnit(fleet, in: directory)
            func webSockets() async throws -> Int { try await fleet.http.request(.GET, "/sim/stats").decode(SimStats.self).webSockets }
            try await waitUntil("the WebSocket closed") { try await webSockets() == 0 }

            // 2040: the 30-day certificate expired long ago on this clock, which nothing vouches for.
            var daemon = try DaemonProcess(
                arguments: ["--gpsd", "127.0.0.1:1"], environment: try ClockTests.faked(["FAKETIME": "@2040-01-01 00:00:00"]),
                config: fleet.config(), directory: directory)
            #expect(try ClockTests.status(daemon).clock?.source == .unsynced)
            // The upgrade needs the unit's certificate: presented, and taken by a backend on the true time.
            try await waitUntil("the WebSocket open over mutual TLS", detail: daemon.log) { try await webSockets() == 1 }
            #expect(try Self.identity(daemon) == enrolled)
            #expect(!daemon.log.contains("renewed"), "\(daemon.log.suffix(2000))")
            try daemon.stop()

            // 1970: the backend's certificate is not valid yet on the system clock, which nothing vouches for. It is
            // judged by the fleet's CA, its name and what this release knows of the time (later than its own date):
            // everything queued goes, the WebSocket opens, and the fleet issued nothing new meanwhile.
            try UplinkTests.queueJourney(in: directory.file("state"))
            let at1970 = try ClockTests.faked(["FAKETIME": "@1970-01-02 00:00:00"])
            daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], environment: at1970, config: fleet.config(), directory: directory)
            #expect(try ClockTests.status(daemon).clock?.source == .unsynced)
            try await Self.journeyOverMutualTLS(daemon, fleet, state: directory.file("state"))
            #expect(try Self.identity(daemon) == enrolled)
            try daemon.stop()

            // The same clock, a backend the fleet's CA never signed: refused all the same, and the status says why.
            let stranger = TemporaryDirectory("stranger-ca")
            let made = try runProgram("/usr/bin/openssl", [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", stranger.file("key.pem"),
                "-out", stranger.file("ca.pem"), "-days", "30", "-subj", "/CN=not the fleet's CA",
            ])
            #expect(made.status == 0, "\(made.stderr)")
            let strangerConfig = fleet.config().replacingOccurrences(of: fleet.ca.file("ca.pem"), with: stranger.file("ca.pem"))
            daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], environment: at1970, config: strangerConfig, directory: directory)
            try waitUntil("the backend's certificate refused", detail: daemon.log) {
                (try ClockTests.status(daemon).uplink?.lastError ?? "").contains("the backend's certificate was refused")
            }
            #expect(try Self.identity(daemon) == enrolled)
            try daemon.stop()
        }
    }

    @Test("a wrong claim token, and one used up, are refused: the unit says so in its status and journal, keeps everything queued and dead-letters nothing")
    func claimRefused() async throws {
        try await Fleet.with(claimUses: 1) { fleet in try await Self.claimRefused(fleet) }
    }

    static func claimRefused(_ fleet: Fleet) async throws {
        _ = try Self.enrolUnit(fleet, in: TemporaryDirectory())

        for (token, label) in [("fleet-claim", "used up"), ("not-the-fleets", "wrong")] {
            let directory = TemporaryDirectory()
            try UplinkTests.queueJourney(in: directory.file("state"))
            let daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: fleet.config(claimToken: token), directory: directory)
            try waitUntil("the \(label) token refused", detail: daemon.log) { try Self.identity(daemon)?.state == .refused }
            let identity = try #require(try Self.identity(daemon))
            #expect(identity.reason?.contains("CLAIM_REFUSED") == true, "\(identity)")
            #expect(daemon.log.contains("enrolment refused"), "\(daemon.log.suffix(2000))")
            // Its requests go without a certificate: answered CERTIFICATE_REQUIRED, which is never a verdict on them, and
            // then it goes quiet (an hour at a time, as a revoked unit): nothing it sends could be taken.
            try await Task.sleep(for: .seconds(2))
            func requests() async throws -> Int { try await fleet.http.request(.GET, "/sim/stats").decode(SimStats.self).requests }
            let before = try await requests()
            try await Task.sleep(for: .seconds(5))
            let after = try await requests()
            #expect(after - before <= 1, "\(after - before) requests in 5 s from a unit with a \(label) claim token")
            let outbox = try Harness.outbox(daemon)
            // The journey's eight transitions all kept (beside them waits the unit's own health report).
            #expect(outbox.transitions == 8 && outbox.deadLetters == 0, "\(outbox)")
            try daemon.stop()
        }
    }

    @Test("certificates of 30 s on a clock GPS made trusted: renewed between 50 % and 80 % of their life with nothing lost or doubled meanwhile, onto a new key when the fleet asks (the subject kept, the old key gone); one that expires while the backend is away (60 s of refused connections) says so in the status and is renewed within 30 s of its return, proven by the key, without a person", .tags(.long))
    func renewsAndRecovers() async throws {
        try await Fleet.with(certificateSeconds: 30) { fleet in
            let directory = TemporaryDirectory()
            try UplinkTests.queueJourney(in: directory.file("state"))
            let fake = try ClockTests.realTimeGPS(directory)
            let daemon = try DaemonProcess(arguments: ["--gpsd", fake.endpoint], config: fleet.config(), directory: directory)
            let first = try Self.enrolled(daemon)
            let firstKey = try String(contentsOfFile: directory.file("state/identity/unit-key.pem"), encoding: .utf8)
            // The fleet wants this unit on a new key: its first renewal for the same key is answered KEY_ROTATION_REQUIRED.
            let asked = try await fleet.http.request(.POST, "/sim/units/rotate", json: ["serial": try #require(first.serial)])
            #expect(asked.status == 200)
            try waitUntil("stamps from GPS time (a trusted clock)", detail: daemon.log) { try ClockTests.status(daemon).clock?.source == .gps }
            // Renewed at 15 to 24 s of its 30 (the first was issued at most 1.5 s back-dated).
            try waitUntil("renewed", timeout: .seconds(40), detail: daemon.log) { try Self.identity(daemon)?.serial != first.serial }
            let renewed = try #require(try Self.identity(daemon))
            #expect(renewed.state == .enrolled && renewed.subject == first.subject)
            let left = (renewed.notAfter ?? 0) - Date().timeIntervalSince1970
            #expect(left > 20, "renewed with \(left) s left of 30: earlier than 80 % of the life would leave at most 28.5")
            let newKey = try String(contentsOfFile: directory.file("state/identity/unit-key.pem"), encoding: .utf8)
            #expect(newKey != firstKey && !FileManager.default.fileExists(atPath: directory.file("state/identity/unit-key.next.pem")))
            let keyAttributes = try FileManager.default.attributesOfItem(atPath: directory.file("state/identity/unit-key.pem"))
            #expect((keyAttributes[.posixPermissions] as? Int) == 0o600)
            #expect(daemon.log.contains("the fleet asks for a new key") && daemon.log.contains("renewed with a new key"), "\(daemon.log.suffix(2000))")
            // Everything queued goes over mutual TLS with the new key.
            let drained = try Harness.drain(daemon)
            #expect(drained.deadLetters == 1)

            // The backend away until the certificate expired; the status says so in words from the expiry on. The expiry
            // is judged on GPS time, which may lag the backend's clock by seconds under load (10 s seen): waited for,
            // within the 60 s away, not assumed after a fixed sleep.
            let away = ContinuousClock.now
            _ = try await fleet.http.request(.POST, "/sim/faults/refuse", json: ["seconds": 60])
            try waitUntil("the status names the expired certificate", timeout: .seconds(55), detail: daemon.log) {
                try Self.identity(daemon)?.reason?.contains("the certificate expired at") == true
            }
            let expired = try #require(try Self.identity(daemon))
            #expect(expired.serial == renewed.serial && expired.reason?.contains("the certificate expired at") == true, "\(expired)")
            let shown = try runProgram(Binaries.path("driverctl"), ["--socket", daemon.socketPath, "status"])
            #expect(shown.stdout.contains("not renewed: the certificate expired at"), "\(shown.stdout)")
            try await Task.sleep(until: away + .seconds(60))
            // Once expired, its renewal goes every 10 to 20 s: renewed within 30 s of the backend's return.
            let back = ContinuousClock.now
            try waitUntil("renewed after expiry", timeout: .seconds(30), detail: daemon.log) {
                guard let identity = try Self.identity(daemon) else { return false }
                return identity.serial != renewed.serial && identity.state == .enrolled
            }
            #expect(try Self.identity(daemon)?.reason == nil)
            _ = try Harness.drain(daemon)
            print("identity: renewed \(back.duration(to: .now)) after the backend's return, and drained")
            let stats = try await fleet.http.request(.GET, "/sim/stats").decode(SimStats.self)
            try UplinkTests.checkJourney(stats, state: directory.file("state"))
            // Renewed with the new key: the fleet asked once.
            #expect(daemon.log.contains("renewed: the unit presents its new certificate"), "\(daemon.log.suffix(2000))")
            #expect(try String(contentsOfFile: directory.file("state/identity/unit-key.pem"), encoding: .utf8) == newKey)
            try daemon.stop()
        }
    }

    @Test("a revoked unit: its requests are answered UNIT_REVOKED, it says so in its status and journal once, stops knocking (an hour between tries) and keeps everything queued")
    func revoked() async throws {
        try await Fleet.with { fleet in
            let directory = TemporaryDirectory()
            let serial = try #require(try Self.enrolUnit(fleet, in: directory).serial)
            // Revoked while it was off; it comes back with a shift's transitions queued.
            _ = try await fleet.http.request(.POST, "/sim/units/revoke", json: ["serial": serial])
            try UplinkTests.queueJourney(in: directory.file("state"))
            let daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: fleet.config(), directory: directory)
            try waitUntil("revoked", detail: daemon.log) { try Self.identity(daemon)?.state == .revoked }
            func requests() async throws -> Int { try await fleet.http.request(.GET, "/sim/stats").decode(SimStats.self).requests }
            try await Task.sleep(for: .seconds(1))
            let before = try await requests()
            try await Task.sleep(for: .seconds(5))
            let after = try await requests()
            #expect(after - before <= 1, "\(after - before) requests in 5 s from a revoked unit")
            let outbox = try Harness.outbox(daemon)
            // The journey's eight transitions all kept (beside them waits the unit's own health report).
            #expect(outbox.transitions == 8 && outbox.deadLetters == 0, "\(outbox)")
            // The queue says why in words, not as the refusal's HTTP status.
            #expect(outbox.lastError?.hasPrefix("the fleet revoked this unit's certificate (the last attempt: ") == true, "\(outbox)")
            let shown = try runProgram(Binaries.path("driverctl"), ["--socket", daemon.socketPath, "status"])
            #expect(shown.stdout.contains("unit      revoked by the fleet"), "\(shown.stdout)")
            #expect(daemon.log.components(separatedBy: "revoked this unit's certificate").count - 1 == 1, "\(daemon.log.suffix(2000))")
            try daemon.stop()
        }
    }
}

/// swtpm, the software TPM 2.0, for one daemon (it serves one connection at a time); killed with the test.
final class SoftwareTPMProcess {
    private(set) var program: BackgroundProgram?
    private(set) var port = 0
    var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    init(directory: TemporaryDirectory) throws {
        try FileManager.default.createDirectory(atPath: directory.file("swtpm"), withIntermediateDirectories: true)
        // tpm2-tss's swtpm TCTI finds the control channel on the next port. A port another test's connection left in
        // TIME_WAIT can refuse swtpm's bind: it exits, and another port is tried.
        for attempt in 0..<5 {
            port = GPSFake.freePort()
            guard port < 65535 else { continue }
            let started = try BackgroundProgram(
                "/usr/bin/swtpm",
                ["socket", "--tpm2", "--tpmstate", "dir=\(directory.file("swtpm"))", "--server", "type=tcp,port=\(port),bindaddr=127.0.0.1",
                 "--ctrl", "type=tcp,port=\(port + 1),bindaddr=127.0.0.1", "--flags", "not-need-init,startup-clear"],
                directory: directory, name: "swtpm-\(attempt).log")
            let deadline = ContinuousClock.now + .seconds(10)
            while started.process.isRunning, !(GPSFake.canConnect(port) && GPSFake.canConnect(port + 1)), ContinuousClock.now < deadline {
                usleep(20_000)
            }
            if started.process.isRunning, GPSFake.canConnect(port) {
                program = started
                return
            }
        }
        throw TestFailure("swtpm did not start on any of 5 ports")
    }
}
