#if canImport(Glibc)
import Glibc
#endif
import BackendContract
import DispatchSimCore
import DriverAPI
import DriverDomain
import Foundation
import JSONRPC
import Testing

/// Remote configuration end to end: dispatch-sim signs and pushes documents, the real driverd checks, stores,
/// restarts into them (under a supervisor that restarts it as systemd's Restart=on-failure does), answers
/// through its outbox, and rolls back from a document that crashes it.
@Suite("Remote configuration", .ownThread)
struct RemoteConfigTests {
    /// `GET /sim/config`.
    struct Overview: Decodable {
        var publicKey: String
        var acks: [ConfigAckEntry]
    }

    struct Publication: Encodable {
        var version: Int
        var settings: [String: ConfigValue]
        var signing: String = "fleet"
    }

    static func config(_ sim: SimProcess, key: String) -> String {
        Harness.config(backend: sim) + "[shift]\nauto_start = true\n[remote]\npublic_key = \"\(key)\"\nhealthy_seconds = 5\n"
    }

    static func overview(_ http: SimHTTP) async throws -> Overview { try await http.request(.GET, "/sim/config").decode(Overview.self) }

    static func publish(_ http: SimHTTP, _ publication: Publication) async throws {
        let reply = try await http.request(.PUT, "/sim/config", json: publication)
        #expect(reply.status == 200)
    }

    /// Waits for the unit's answer to `version` with `status`.
    static func ack(_ http: SimHTTP, version: Int, _ status: ConfigAckStatus, timeout: Duration = .seconds(60), detail: @autoclosure () -> String) async throws -> ConfigAck {
        var found: ConfigAck?
        try await waitUntil("ack \(status.rawValue) of v\(version)", timeout: timeout, detail: detail()) {
            found = try await overview(http).acks.map(\.ack).first { $0.version == version && $0.status == status }
            return found != nil
        }
        return found!
    }

    static func show(_ unit: Supervised) throws -> ConfigShowResult { try unit.current.client().call(Methods.configShow, NoParams()) }

    @Test("a signed v2 is applied (a restart), acked APPLIED and shown as remote v2; unsigned, foreign-signed, older, out-of-range and forbidden documents are refused with their reasons and v2 runs on")
    func applyAndRefuse() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let key = try await Self.overview(http).publicKey
        let unit = try Supervised(config: Self.config(sim, key: key))
        try waitUntil("online", detail: unit.log) { try Harness.outbox(unit.current).link == .online }
        try await Self.publish(http, Publication(version: 2, settings: ["sampling.stationary_hz": .double(0.2), "arrival.radius": .integer(150)]))
        let applied = try await Self.ack(http, version: 2, .applied, detail: unit.log)
        #expect(applied.runningVersion == 2)
        let shown = try Self.show(unit)
        let entries = Dictionary(uniqueKeysWithValues: shown.entries.map { ($0.key, $0) })
        #expect(entries["sampling.stationary_hz"]?.value == "0.2" && entries["sampling.stationary_hz"]?.source == "remote v2")
        #expect(entries["arrival.radius"]?.value == "150.0" && entries["arrival.radius"]?.source == "remote v2")
        #expect(entries["backend.url"]?.source == "file" && entries["arrival.mode"]?.source == "default" && entries["rpc.socket"]?.source == "flag")
        #expect(shown.remote == RemoteConfigStatus(enabled: true, running: 2, onTrial: false))
        #expect(unit.exits == [75], "one restart, to apply v2: \(unit.exits)")

        let refusals: [(Publication, String)] = [
            (Publication(version: 3, settings: ["sampling.stationary_hz": .double(0.5)], signing: "none"), "unsigned"),
            (Publication(version: 3, settings: ["sampling.stationary_hz": .double(0.5)], signing: "other"), "bad signature"),
            (Publication(version: 1, settings: ["sampling.stationary_hz": .double(0.5)]), "not newer than v2"),
            (Publication(version: 3, settings: ["safety.speed_limit": .integer(500)]), "safety.speed_limit: 500 is invalid"),
            (Publication(version: 3, settings: ["backend.url": .string("https://elsewhere.example")]), "not changeable remotely: backend.url"),
        ]
        for (publication, reason) in refusals {
            let before = try await Self.overview(http).acks.count
            try await Self.publish(http, publication)
            var refusal: ConfigAck?
            try await waitUntil("the refusal of \(publication)", timeout: .seconds(30), detail: unit.log) {
                refusal = try await Self.overview(http).acks.dropFirst(before).map(\.ack).first
                return refusal != nil
            }
            #expect(refusal?.status == .refused && refusal?.version == publication.version && refusal?.runningVersion == 2)
            #expect(refusal?.reason?.contains(reason) == true, "\(refusal?.reason ?? "no reason"), expected \(reason)")
        }
        #expect(try Self.show(unit).remote.running == 2)
        #expect(unit.exits == [75], "no refused document restarted the unit: \(unit.exits)")

        // The backend goes on offering the last refused document. The next start fetches it, refuses it again, and
        // must not answer again: the same key with a new time would be refused for good (a dead letter), and the
        // backend already has the answer.
        let answers = try await Self.overview(http).acks.count
        unit.kill9()
        try waitUntil("started again", detail: unit.log) { unit.exits.count == 2 }
        try waitUntil("the refused document fetched again", timeout: .seconds(60), detail: unit.log) {
            unit.log.contains("remote configuration v3 refused")
        }
        try waitUntil("online again", detail: unit.log) { (try? Harness.outbox(unit.current))?.link == .online }
        let drained = try Harness.drain(unit.current)
        #expect(drained.deadLetters == 0, "\(unit.log)")
        #expect(try await Self.overview(http).acks.count == answers)
        unit.stop()
    }

    @Test("a document that crashes the daemon at every start is rolled back after three starts; the backend hears ROLLED_BACK and v2 runs")
    func rollBack() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let key = try await Self.overview(http).publicKey
        // No crash report for the crashes on purpose: its register dump would look like data to the privacy check.
        let unit = try Supervised(
            config: Self.config(sim, key: key), environment: ["DRIVERD_TEST_FAULT_CRASH_WITH_REMOTE_VERSION": "3", "SWIFT_BACKTRACE": "enable=no"])
        try waitUntil("online", detail: unit.log) { try Harness.outbox(unit.current).link == .online }
        try await Self.publish(http, Publication(version: 2, settings: ["arrival.radius": .integer(120)]))
        _ = try await Self.ack(http, version: 2, .applied, detail: unit.log)
        let pushed = ContinuousClock.now
        try await Self.publish(http, Publication(version: 3, settings: ["arrival.radius": .integer(130)]))
        let rolledBack = try await Self.ack(http, version: 3, .rolledBack, timeout: .seconds(90), detail: unit.log)
        print("v3 pushed to ROLLED_BACK at the backend: \(ContinuousClock.now - pushed)")
        #expect(rolledBack.runningVersion == 2 && rolledBack.reason?.contains("3 starts within 5 minutes") == true, "\(rolledBack)")
        try waitUntil("listening again", detail: unit.log) { (try? Self.show(unit)) != nil }
        let shown = try Self.show(unit)
        #expect(shown.remote.running == 2 && !shown.remote.onTrial)
        #expect(shown.entries.first { $0.key == "arrival.radius" }?.value == "120.0")
        // v2's restart, v3's restart, two crashes at start with v3; the third start went back to v2.
        #expect(unit.exits.prefix(2) == [75, 75] && unit.exits.dropFirst(2).filter { $0 == -Int(SIGABRT) }.count == 2, "\(unit.exits)")
        // The same v3 offered again is not taken.
        #expect(try await Self.overview(http).acks.filter { $0.ack.version == 3 }.count == 1)
        unit.stop()
    }

    @Test("kill -9 at random points of applying: each start runs the old document or the new one, whole, never a mix")
    func killDuringApply() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let key = try await Self.overview(http).publicKey
        let unit = try Supervised(config: Self.config(sim, key: key))
        try waitUntil("online", detail: unit.log) { try Harness.outbox(unit.current).link == .online }
        var previous: Int?
        for version in 2...6 {
            try await Self.publish(http, Publication(version: version, settings: [
                "arrival.radius": .integer(100 + version), "trips.idle_seconds": .integer(300 + version), "harsh.braking_mps2": .double(3 + Double(version) / 10),
            ]))
            usleep(UInt32.random(in: 0...600_000))
            unit.kill9()
            // One answer, read whole: the new start may fetch the document and restart into it right after.
            var answer: ConfigShowResult?
            try waitUntil("listening after kill -9", detail: unit.log) {
                answer = try? Self.show(unit)
                return answer != nil
            }
            let shown = try #require(answer)
            let entries = Dictionary(uniqueKeysWithValues: shown.entries.map { ($0.key, $0) })
            let running = shown.remote.running
            #expect(running == previous || running == version, """
                v\(version) pushed, running \(String(describing: running)), before \(String(describing: previous)); exits \(unit.exits)
                \(unit.logs.split(separator: "\n").filter { $0.contains("configuration") || $0.contains("next start") }.suffix(24).joined(separator: "\n"))
                """)
            let sources = Set(["arrival.radius", "trips.idle_seconds", "harsh.braking_mps2"].map { entries[$0]?.source })
            #expect(sources == [running.map { "remote v\($0)" } ?? "default"], "\(sources) with v\(String(describing: running))")
            if let running {
                #expect(entries["arrival.radius"]?.value == "\(Double(100 + running))" && entries["trips.idle_seconds"]?.value == "\(Double(300 + running))")
            }
            // Let it settle on what it got (a document killed before its restart is taken at the next fetch), and run
            // it healthily: a trial's starts count towards its rollback, so "the old document" is the last good one.
            try waitUntil("v\(version) running, good", timeout: .seconds(60), detail: unit.log) {
                (try? Self.show(unit)).map { $0.remote.running == version && !$0.remote.onTrial } ?? false
            }
            previous = version
        }
        unit.stop()
    }
}

/// driverd under a supervisor that starts it again whenever it exits (as systemd's Restart=on-failure does, with
/// a short RestartSec), in one directory; remembers each exit (its status, or minus the signal that ended it).
final class Supervised: @unchecked Sendable {
    private let lock = NSLock()
    private var daemon: DaemonProcess
    private var exitList: [Int] = []
    private var stopped = false
    private let directory = TemporaryDirectory()
    private let config: String
    private let environment: [String: String]

    init(config: String, environment: [String: String] = [:]) throws {
        self.config = config
        self.environment = environment
        daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], environment: environment, config: config, directory: directory)
        Thread { [self] in supervise() }.start()
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    private func supervise() {
        while true {
            let process = locked { daemon.process }
            process.waitUntilExit()
            let status = process.terminationReason == .uncaughtSignal ? -Int(process.terminationStatus) : Int(process.terminationStatus)
            let done = locked { () -> Bool in
                exitList.append(status)
                return stopped || exitList.count > 20
            }
            if done { return }
            usleep(300_000)
            guard let next = try? DaemonProcess(
                arguments: ["--gpsd", "127.0.0.1:1"], environment: environment, config: config, waitForSocket: false, directory: directory)
            else { return }
            locked { daemon = next }
        }
    }

    /// The daemon running now (or the last one).
    var current: DaemonProcess { locked { daemon } }
    /// Each exit so far, oldest first; kills by the test included.
    var exits: [Int] { locked { exitList } }
    var log: String { current.log }
    /// Every start's log, oldest first (for a failure's message).
    var logs: String {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".stderr") }
        let dated = names.map { name in
            (name, (try? FileManager.default.attributesOfItem(atPath: directory.file(name))[.modificationDate] as? Date) ?? Date.distantPast)
        }
        return dated.sorted { $0.1 < $1.1 }.map { (try? String(contentsOfFile: directory.file($0.0), encoding: .utf8)) ?? "" }.joined(separator: "--- next start\n")
    }

    func kill9() { Glibc.kill(current.pid, SIGKILL) }

    func stop() {
        locked { stopped = true }
        _ = try? current.stop()
    }
}
