#if canImport(Glibc)
import Glibc
#endif
import BackendContract
import DispatchSimCore
import DriverAPI
import Foundation
import JSONRPC
import Testing

/// Self-update, the daemon's side, end to end with dispatch-sim: releases refused with their reasons and no byte
/// downloaded; a good one downloaded chunk by chunk through a kill -9 without resending what arrived; nothing
/// asked of driverd-update while on shift; the ask in the window; driverd-update's verdict reported once.
/// driverd-update itself (root, dpkg, the health gate) runs under systemd in `make test-package`.
@Suite("Self-update (the daemon's side)", .ownThread)
struct UpdateTests {
    struct Overview: Decodable {
        struct Served: Decodable {
            var manifest: ReleaseManifest
            var bytesServed: Int
            var chunksServed: Int
        }

        var publicKey: String
        var releases: [Served]
        var acks: [UpdateAckEntry]
    }

    static func overview(_ http: SimHTTP) async throws -> Overview { try await http.request(.GET, "/sim/releases").decode(Overview.self) }

    static func publish(
        _ http: SimHTTP, _ bytes: Data, package: String = "driverd", version: String, architecture: String = "amd64", signing: String = "fleet"
    ) async throws {
        let query = "package=\(package)&version=\(version)&architecture=\(architecture)&signing=\(signing)&chunkSize=65536"
        let reply = try await http.request(.PUT, "/sim/releases?\(query)", body: bytes)
        #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
    }

    static func ack(_ http: SimHTTP, version: String, _ status: UpdateAckStatus, detail: @autoclosure () -> String) async throws -> UpdateAck {
        var found: UpdateAck?
        try await waitUntil("\(status.rawValue) for \(version)", timeout: .seconds(60), detail: detail()) {
            found = try await overview(http).acks.map(\.ack).first { $0.version == version && $0.status == status }
            return found != nil
        }
        return found!
    }

    /// A unit with driverd 0.1.0 installed (a dpkg status file in `directory`) that trusts the backend's release key:
    /// the backend's settings, `before` (other tables), and `update` (more of the `[update]` table).
    static func config(_ sim: SimProcess, key: String, directory: TemporaryDirectory, before: String = "", update: String = "") throws -> String {
        try "Package: driverd\nStatus: install ok installed\nVersion: 0.1.0\nArchitecture: amd64\n"
            .write(toFile: directory.file("dpkg-status"), atomically: true, encoding: .utf8)
        return Harness.config(backend: sim) + before + "[update]\npublic_key = \"\(key)\"\ndpkg_status = \"\(directory.file("dpkg-status"))\"\n" + update
    }

    static func status(_ daemon: DaemonProcess) throws -> UpdateStatus { try daemon.client().call(Methods.updateStatus, NoParams()) }

    @Test("refused with the reason and nothing downloaded: a foreign signature, no signature, not newer, another architecture, a package not installed; a good release resumes after kill -9 without resending a chunk, waits while on shift, is asked for off shift, and driverd-update's verdict is reported once", .tags(.long))
    func release() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let key = try await Self.overview(http).publicKey
        let directory = TemporaryDirectory()
        try "Package: driverd\nStatus: install ok installed\nVersion: 0.1.0\nArchitecture: amd64\n\nPackage: gpsd\nStatus: install ok installed\nVersion: 3.22-4\nArchitecture: amd64\n"
            .write(toFile: directory.file("dpkg-status"), atomically: true, encoding: .utf8)
        let config = Harness.config(backend: sim) + """
            [shift]
            auto_start = true
            [update]
            public_key = "\(key)"
            dpkg_status = "\(directory.file("dpkg-status"))"

            """
        var daemon = try DaemonProcess(config: config, directory: directory)
        try waitUntil("online", detail: daemon.log) { try Harness.outbox(daemon).link == .online }

        // `driverctl update --check` with the backend's release endpoint failing: the error, and no release.
        _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(errorRate: 1, pathPrefix: "/api/v1/rider/release"))
        let unreached = try runProgram(Binaries.path("driverctl"), ["--socket", daemon.socketPath, "update", "--check"])
        #expect(unreached.status != 0 && unreached.stderr.contains("the backend was not reached"), "\(unreached)")
        _ = try await http.request(.DELETE, "/sim/faults")

        // Refused, each with its reason; the unit fetches no chunk of any.
        let junk = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let refusals: [(String, String, String, String, String)] = [
            ("driverd", "0.3.0", "amd64", "other", "bad signature"),
            ("driverd", "0.3.1", "amd64", "none", "unsigned"),
            ("driverd", "0.1.0", "amd64", "fleet", "not newer than the installed 0.1.0"),
            ("driverd", "0.3.2", "arm64", "fleet", "architecture arm64"),
            ("driverd-kiosk", "0.3.3", "amd64", "fleet", "package driverd-kiosk is not installed"),
        ]
        for (package, version, architecture, signing, reason) in refusals {
            try await Self.publish(http, junk + Data(version.utf8), package: package, version: version, architecture: architecture, signing: signing)
            let refused = try await Self.ack(http, version: version, .refused, detail: daemon.log)
            #expect(refused.reason?.contains(reason) == true, "\(refused)")
            #expect(refused.runningVersion == "0.1.0")
        }
        #expect(try await Self.overview(http).releases.allSatisfy { $0.bytesServed == 0 })
        #expect(try Self.status(daemon).lastOutcome?.status == .refused)

        // The backend keeps the last refused release staged. The next start refuses it again and does not answer
        // again: the same key with a new time would be refused for good (a dead letter), and the backend has the answer.
        let answers = try await Self.overview(http).acks.count
        kill(daemon.pid, SIGKILL)
        _ = try daemon.stop()
        daemon = try DaemonProcess(config: config, directory: directory)
        try waitUntil("the refused release fetched again", timeout: .seconds(60), detail: daemon.log) {
            daemon.log.contains("0.3.3") && daemon.log.contains("refused:")
        }
        #expect(try Harness.drain(daemon).deadLetters == 0, "\(daemon.log)")
        #expect(try await Self.overview(http).acks.count == answers)

        // A good release of 1 MiB in 16 chunks, slowed to 300 ms a chunk: killed after a few chunks, then resumed.
        let package = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) })
        _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(latencyMs: 300, pathPrefix: "/api/v1/rider/release/"))
        try await Self.publish(http, package, version: "0.2.0")
        // `update.check` answers once the staged release is taken (whether its push or the check fetched it first).
        let checked = try runProgram(Binaries.path("driverctl"), ["--socket", daemon.socketPath, "--json", "update", "--check"])
        let afterCheck = try JSONDecoder().decode(UpdateStatus.self, from: Data(checked.stdout.utf8))
        #expect(afterCheck.release?.version == "0.2.0" && afterCheck.release?.state == .downloading, "\(checked)")
        try await waitUntil("a few chunks downloaded", timeout: .seconds(60), detail: daemon.log) {
            try await Self.overview(http).releases.last!.chunksServed >= 4
        }
        kill(daemon.pid, SIGKILL)
        _ = try daemon.stop()
        _ = try await http.request(.DELETE, "/sim/faults")
        daemon = try DaemonProcess(config: config, directory: directory)
        _ = try await Self.ack(http, version: "0.2.0", .downloaded, detail: daemon.log)
        let served = try #require(try await Self.overview(http).releases.last)
        print("self-update download through kill -9: \(served.bytesServed) bytes served in \(served.chunksServed) chunks for a package of \(package.count)")
        // At most the one chunk in flight at the kill came twice.
        #expect(served.bytesServed <= package.count + 65536, "\(served.bytesServed) bytes for \(package.count)")
        let downloaded = try Data(contentsOf: URL(fileURLWithPath: directory.file("state/update/package.deb")))
        #expect(downloaded == package)

        // On shift (auto_start): nothing is asked of driverd-update; the status says what it waits for (its own
        // DOWNLOADED first, then the shift).
        try waitUntil("waiting for the shift's end", timeout: .seconds(45), detail: daemon.log) {
            try Self.status(daemon).release?.waitingFor?.contains("on shift") == true
        }
        #expect(try Self.status(daemon).release?.state == .downloaded)
        #expect(!FileManager.default.fileExists(atPath: directory.file("state/update/request.json")))
        let shown = try runProgram(Binaries.path("driverctl"), ["--socket", daemon.socketPath, "update"])
        #expect(shown.stdout.contains("driverd 0.2.0, downloaded") && shown.stdout.contains("1048576 of 1048576 bytes"), "\(shown.stdout)")

        // Off shift: the window is open; the ask is the signed release as the backend sent it. The shift's end wakes
        // the desk: the ask comes at once, not at the next 30-s round.
        _ = try daemon.client().call(Methods.shiftEnd, NoParams())
        try waitUntil("the install asked", timeout: .seconds(10), detail: daemon.log) {
            FileManager.default.fileExists(atPath: directory.file("state/update/request.json"))
        }
        let asked = try JSONDecoder().decode(SignedRelease.self, from: Data(contentsOf: URL(fileURLWithPath: directory.file("state/update/request.json"))))
        #expect(try JSONDecoder().decode(ReleaseManifest.self, from: #require(Data(base64Encoded: asked.payload))).version == "0.2.0")
        // The ask is written before the desk's state says so.
        try waitUntil("installing", timeout: .seconds(10), detail: daemon.log) { try Self.status(daemon).release?.state == .installing }

        // driverd-update's verdict (written as it writes it): reported once, the release's files gone.
        let verdict = UpdateAck(package: "driverd", version: "0.2.0", status: .applied, reason: nil, runningVersion: "0.2.0", at: Date().timeIntervalSince1970)
        try JSONEncoder().encode(verdict).write(to: URL(fileURLWithPath: directory.file("state/update/outcome.json")))
        let written = Date()
        _ = try await Self.ack(http, version: "0.2.0", .applied, detail: daemon.log)
        // Looked for every 2 s while installing, not once a round.
        #expect(Date().timeIntervalSince(written) < 10, "the verdict reached the backend \(Date().timeIntervalSince(written)) s after driverd-update wrote it")
        try waitUntil("the release's files gone", timeout: .seconds(10), detail: daemon.log) {
            !FileManager.default.fileExists(atPath: directory.file("state/update/package.deb"))
                && !FileManager.default.fileExists(atPath: directory.file("state/update/outcome.json"))
        }
        #expect(try Self.status(daemon).lastOutcome?.status == .applied)
        _ = try daemon.stop()
        #expect(try await Self.overview(http).acks.filter { $0.ack.version == "0.2.0" && $0.ack.status == .applied }.count == 1)
    }

    @Test("an SOS waiting for the backend holds the download back; the day's byte cap pauses it and says so; update.mode external only reports the version; a disk without room refuses the release before a byte is fetched")
    func lowestPriority() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let key = try await Self.overview(http).publicKey
        let directory = TemporaryDirectory()
        let config = try Self.config(sim, key: key, directory: directory, before: "[uplink]\nurgent_retry_seconds = 2\n", update: "max_bytes_per_day = 1048576\n")
        let daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: config, directory: directory)
        try waitUntil("online", detail: daemon.log) { try Harness.outbox(daemon).link == .online }

        // An SOS the backend does not take yet: the release waits behind it, not a byte fetched.
        _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(errorRate: 1, pathPrefix: BackendPaths.sos))
        _ = try daemon.client().call(Methods.sosRaise, SOSParams(note: "test: before the update"))
        let package = Data((0..<(1_536 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try await Self.publish(http, package, version: "0.2.0")
        try waitUntil("paused behind the SOS", timeout: .seconds(30), detail: daemon.log) {
            try Self.status(daemon).release?.waitingFor?.contains("SOS") == true
        }
        #expect(try await Self.overview(http).releases.last?.chunksServed == 0)

        // The SOS goes; the download follows, and stops at the day's cap (1 MiB of 1.5).
        _ = try await http.request(.DELETE, "/sim/faults")
        try waitUntil("paused at the day's cap", timeout: .seconds(60), detail: daemon.log) {
            try Self.status(daemon).release?.waitingFor?.contains("max_bytes_per_day") == true
        }
        let capped = try Self.status(daemon)
        #expect(capped.bytesToday == 1 << 20 && capped.release?.downloadedBytes == 1 << 20 && capped.release?.state == .paused, "\(capped)")
        #expect(try await Self.overview(http).releases.last?.bytesServed == 1 << 20)
        _ = try daemon.stop()

        // A unit whose image another tool updates: it answers with its version and fetches nothing.
        let external = try DaemonProcess(
            arguments: ["--gpsd", "127.0.0.1:1"], config: config + "mode = \"external\"\n", directory: TemporaryDirectory())
        try await Self.publish(http, package + Data([1]), version: "0.3.0")
        let refused = try await Self.ack(http, version: "0.3.0", .refused, detail: external.log)
        #expect(refused.reason?.contains("update.mode = external") == true && refused.runningVersion == "0.1.0", "\(refused)")
        #expect(try Self.status(external).mode == .external)
        _ = try external.stop()

        // A unit whose state directory (a 40 MiB file system) has no room for a package of 8 MiB (twice that, the
        // download and driverd-update's copy, plus a margin): refused with the reason before a byte is fetched.
        let small = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: small.file("state"), withIntermediateDirectories: true)
        let mounted = try runProgram("/bin/mount", ["-t", "tmpfs", "-o", "size=40m", "tmpfs", small.file("state")])
        try #require(mounted.status == 0, "\(mounted.stderr)")
        defer { _ = try? runProgram("/bin/umount", ["-l", small.file("state")]) }
        let crowded = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: config, directory: small)
        try waitUntil("online", detail: crowded.log) { try Harness.outbox(crowded).link == .online }
        try await Self.publish(http, Data((0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }), version: "0.4.0")
        let full = try await Self.ack(http, version: "0.4.0", .refused, detail: crowded.log)
        #expect(full.reason?.contains("not enough disk space") == true, "\(full)")
        #expect(try await Self.overview(http).releases.last?.chunksServed == 0)
        _ = try crowded.stop()
    }

    @Test("on shift, the install is asked for once the ignition has been off for update.quiet_minutes (not before), or at once inside update.window's hours", .tags(.long))
    func windowOnShift() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let key = try await Self.overview(http).publicKey
        let directory = TemporaryDirectory()
        let ignition = directory.file("ignition")
        try "1\n".write(toFile: ignition, atomically: true, encoding: .utf8)
        let units = "[shift]\nauto_start = true\n[ignition]\npath = \"\(ignition)\"\n[battery]\npoll_seconds = 2\n"
        let config = try Self.config(sim, key: key, directory: directory, before: units, update: "quiet_minutes = 1\n")
        let daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: config, directory: directory)
        try waitUntil("online", detail: daemon.log) { try Harness.outbox(daemon).link == .online }
        try await Self.publish(http, Data((0..<(64 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 11) }), version: "0.2.0")
        _ = try await Self.ack(http, version: "0.2.0", .downloaded, detail: daemon.log)
        try waitUntil("waiting on shift", timeout: .seconds(45), detail: daemon.log) {
            try Self.status(daemon).release?.waitingFor?.contains("min parked with the ignition off") == true
        }
        // The ignition goes off: nothing asked for a minute, then the ask (the window is looked at every 30 s).
        let off = Date()
        try "0\n".write(toFile: ignition, atomically: true, encoding: .utf8)
        let request = directory.file("state/update/request.json")
        try waitUntil("the install asked", timeout: .seconds(150), detail: daemon.log) { FileManager.default.fileExists(atPath: request) }
        let waited = Date().timeIntervalSince(off)
        print("self-update on shift: asked \(String(format: "%.1f", waited)) s after the ignition went off (update.quiet_minutes = 1)")
        #expect(waited >= 60, "asked \(waited) s after the ignition went off")
        // The ask is written before the desk's state says so.
        try waitUntil("installing", timeout: .seconds(10), detail: daemon.log) { try Self.status(daemon).release?.state == .installing }
        #expect(try daemon.client().call(Methods.shiftStatus, NoParams()).onShift)
        _ = try daemon.stop()

        // Another unit, on shift with the ignition on, inside update.window's hours (this hour and the next): asked at once.
        var now = time(nil), local = tm()
        localtime_r(&now, &local)
        let hour = Int(local.tm_hour)
        try "1\n".write(toFile: ignition, atomically: true, encoding: .utf8)
        let windowed = TemporaryDirectory()
        let inWindow = try DaemonProcess(
            arguments: ["--gpsd", "127.0.0.1:1"],
            config: try Self.config(sim, key: key, directory: windowed, before: units, update: "window = \"\(hour)-\((hour + 2) % 24)\"\n"),
            directory: windowed)
        try waitUntil("online", detail: inWindow.log) { try Harness.outbox(inWindow).link == .online }
        try await Self.publish(http, Data((0..<(64 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 17) }), version: "0.3.0")
        try waitUntil("the install asked inside the hours", timeout: .seconds(90), detail: inWindow.log) {
            FileManager.default.fileExists(atPath: windowed.file("state/update/request.json"))
        }
        #expect(try inWindow.client().call(Methods.shiftStatus, NoParams()).onShift)
        _ = try inWindow.stop()
    }

    @Test("releases that would hurt the unit: absurd sizes refused without a trap, a version too long answered within the contract, a manifest no download can satisfy refused once and never fetched again, a release replaced mid-download stops at once, and a newer release offered during an install waits for the verdict and is installed next")
    func badReleases() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let key = try await Self.overview(http).publicKey
        let directory = TemporaryDirectory()
        let config = try Self.config(sim, key: key, directory: directory)
        var daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: config, directory: directory)
        try waitUntil("online", detail: daemon.log) { try Harness.outbox(daemon).link == .online }
        let digest = String(repeating: "ab", count: 32)

        // Fleet-signed manifests whose numbers overflow any arithmetic on them: refused with the reason, no trap.
        let absurd: [(String, ReleaseManifest)] = [
            ("size", ReleaseManifest(package: "driverd", version: "0.5.0", architecture: "amd64", size: Int.max, sha256: digest, chunkSize: 1, chunks: [digest], issuedAt: 0)),
            ("size", ReleaseManifest(package: "driverd", version: "0.5.1", architecture: "amd64", size: (1 << 62) + 1, sha256: digest, chunkSize: 1 << 62, chunks: [digest, digest], issuedAt: 0)),
            ("chunk size", ReleaseManifest(package: "driverd", version: "0.5.2", architecture: "amd64", size: 1000, sha256: digest, chunkSize: -1, chunks: [digest], issuedAt: 0)),
            ("do not add up", ReleaseManifest(package: "driverd", version: "0.5.3", architecture: "amd64", size: 1000, sha256: digest, chunkSize: 100, chunks: [digest], issuedAt: 0)),
        ]
        for (reason, manifest) in absurd {
            let staged = try await http.request(.PUT, "/sim/releases/manifest", body: try JSONEncoder().encode(manifest))
            #expect(staged.status == 200, "\(String(decoding: staged.body, as: UTF8.self))")
            let refused = try await Self.ack(http, version: manifest.version, .refused, detail: daemon.log)
            #expect(refused.reason?.contains(reason) == true, "\(refused)")
        }
        // A version of 100 characters (a valid Debian one): refused, and the answer reaches the backend (its key and
        // body within the contract), naming the version by its start.
        let long = "0.6.0+" + String(repeating: "x", count: 94)
        let staged = try await http.request(.PUT, "/sim/releases/manifest", body: try JSONEncoder().encode(ReleaseManifest(
            package: "driverd", version: long, architecture: "amd64", size: 10, sha256: digest, chunkSize: 10, chunks: [digest], issuedAt: 0)))
        #expect(staged.status == 200)
        try await waitUntil("the long version's refusal received", timeout: .seconds(60), detail: daemon.log) {
            try await Self.overview(http).acks.contains { $0.ack.status == .refused && long.hasPrefix($0.ack.version.dropLast()) && $0.ack.reason?.contains("at most 64") == true }
        }
        #expect(daemon.process.isRunning)
        #expect(try Harness.outbox(daemon).deadLetters == 0)

        // Every chunk true, the whole-file SHA-256 another: downloaded once, refused once, not fetched again after a
        // restart (when the backend offers it again).
        let honest = Data((0..<(200 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 29) })
        let query = "package=driverd&version=0.7.0&architecture=amd64&chunkSize=65536&declaredSha256=\(digest)"
        #expect(try await http.request(.PUT, "/sim/releases?\(query)", body: honest).status == 200)
        let unsatisfiable = try await Self.ack(http, version: "0.7.0", .refused, detail: daemon.log)
        #expect(unsatisfiable.reason?.contains("no download can satisfy") == true, "\(unsatisfiable)")
        _ = try daemon.stop()
        daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: config, directory: directory)
        try waitUntil("online again", detail: daemon.log) { try Harness.outbox(daemon).link == .online }
        _ = try runProgram(Binaries.path("driverctl"), ["--socket", daemon.socketPath, "update", "--check"])
        let once = try #require(try await Self.overview(http).releases.first { $0.manifest.version == "0.7.0" })
        #expect(once.chunksServed == 4 && once.bytesServed == honest.count, "\(once.chunksServed) chunks, \(once.bytesServed) bytes")
        #expect(try await Self.overview(http).acks.filter { $0.ack.version == "0.7.0" }.count == 1)

        // A release replaced while it downloads (300 ms a chunk, 16 chunks): the old one's download stops at once,
        // the new one is downloaded whole and asked for (off shift).
        _ = try daemon.client().call(Methods.shiftEnd, NoParams())
        _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(latencyMs: 300, pathPrefix: "/api/v1/rider/release/"))
        let first = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 11) })
        try await Self.publish(http, first, version: "0.8.0")
        try await waitUntil("a few chunks of 0.8.0", timeout: .seconds(60), detail: daemon.log) {
            try await Self.overview(http).releases.first { $0.manifest.version == "0.8.0" }!.chunksServed >= 3
        }
        let second = Data((0..<(256 << 10)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 9) })
        try await Self.publish(http, second, version: "0.8.1")
        // Counted from when the unit knows of the replacement (its push can take a second on a loaded machine, and
        // chunks go on meanwhile): from then on, at most the chunk in flight.
        try waitUntil("the replacement known", timeout: .seconds(30), detail: daemon.log) { try Self.status(daemon).release?.version == "0.8.1" }
        let atReplacement = try await Self.overview(http).releases.first { $0.manifest.version == "0.8.0" }!.chunksServed
        _ = try await Self.ack(http, version: "0.8.1", .downloaded, detail: daemon.log)
        let old = try await Self.overview(http).releases.first { $0.manifest.version == "0.8.0" }!.chunksServed
        #expect(old <= atReplacement + 1, "0.8.0: \(atReplacement) chunks when the unit knew of the replacement, \(old) in the end")
        try waitUntil("0.8.1's install asked", timeout: .seconds(60), detail: "\((try? Self.status(daemon)).map { "\($0)" } ?? "")\n\(daemon.log)") {
            try Self.status(daemon).release?.state == .installing
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.file("state/update/package.deb"))) == second)
        _ = try await http.request(.DELETE, "/sim/faults")

        // Offered during that install: it waits (0.8.1's package untouched); 0.8.1 is rolled back; 0.8.2 is taken next.
        let third = Data((0..<(128 << 10)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 7) })
        try await Self.publish(http, third, version: "0.8.2")
        try await Task.sleep(for: .seconds(3))
        #expect(try Self.status(daemon).release?.version == "0.8.1")
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.file("state/update/package.deb"))) == second)
        #expect(try await Self.overview(http).releases.first { $0.manifest.version == "0.8.2" }!.chunksServed == 0)
        let secondSHA = try await Self.overview(http).releases.first { $0.manifest.version == "0.8.1" }!.manifest.sha256
        let verdict = UpdateAck(
            package: "driverd", version: "0.8.1", status: .rolledBack, reason: "no READY", runningVersion: "0.1.0", at: Date().timeIntervalSince1970,
            sha256: secondSHA)
        try JSONEncoder().encode(verdict).write(to: URL(fileURLWithPath: directory.file("state/update/outcome.json")))
        _ = try await Self.ack(http, version: "0.8.1", .rolledBack, detail: daemon.log)
        _ = try await Self.ack(http, version: "0.8.2", .downloaded, detail: daemon.log)
        try waitUntil("0.8.2's install asked", timeout: .seconds(60), detail: daemon.log) {
            try Self.status(daemon).release.map { $0.version == "0.8.2" && $0.state == .installing } == true
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.file("state/update/package.deb"))) == third)
        #expect(daemon.process.isRunning)
        _ = try daemon.stop()
    }
}
