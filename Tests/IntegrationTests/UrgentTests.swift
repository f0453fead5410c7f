import BackendContract
import DispatchSimCore
import DriverAPI
import DriverStore
import Foundation
import JSONRPC
import Testing

/// Urgent items first: an SOS and a transition overtake a draining ping backlog; an SOS is repeated until the
/// backend takes it, through kill -9. Real driverd, driverctl and dispatch-sim over loopback.
@Suite("Urgent items", .ownThread)
struct UrgentTests {
    /// A 10 s batch interval everywhere, a shift on, the test's own SOS retry interval.
    static func config(_ sim: SimProcess, urgentRetry: Int = 5) -> String {
        Harness.config(backend: sim) + """
            [shift]
            auto_start = true
            [uplink]
            moving_batch_seconds = 10
            stationary_batch_seconds = 10
            urgent_retry_seconds = \(urgentRetry)
            """
    }

    @Test("with a 10,000-ping backlog draining over a slow link (600 ms a message), an SOS and a transition reach the backend before the backlog does")
    func overtakeBacklog() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let directory = TemporaryDirectory()
        // First run: log in and learn the route, so the second run has a task to accept.
        var daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: Self.config(sim), directory: directory)
        try waitUntil("the route synced", detail: daemon.log) {
            try daemon.client().call(Methods.routeGet, NoParams()).tasks.contains { $0.id == "task-1001" }
        }
        try daemon.stop()
        // The backlog: 10,000 pings waiting in the store (as after hours without a link).
        let store = try Store(directory: directory.file("state"))
        let recorder = PingRecorder(store: store)
        let start = Date().timeIntervalSince1970 - 10_000
        for index in 0..<10_000 {
            let fix = Fix(time: start + Double(index), latitude: 49.0134 + Double(index % 600) * 1e-6, longitude: 12.1016, speed: 0, horizontalError: 4, mode: 3)
            recorder.append(PingRecord(fix: fix, motion: .stationary, reason: .interval, recordedAt: start + Double(index)), now: 0, nextSampleIn: 100)
        }
        recorder.flush()
        // A slow link: every rider request and WebSocket message waits 600 ms, so the backlog takes 12 s to drain.
        _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(latencyMs: 600, pathPrefix: "/api/v1/rider/"))
        // From here to the SOS nothing awaits: a test task suspended behind the suite's other work could resume
        // after the whole drain. Blocking calls only, on this thread.
        daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: Self.config(sim), directory: directory)
        let deadline = ContinuousClock.now + .seconds(60)
        while try Harness.outbox(daemon).pings >= 10_000, ContinuousClock.now < deadline { usleep(20_000) }
        let sos = try runProgram(Binaries.path("driverctl"), ["--socket", daemon.socketPath, "sos", "--note", "test: overtaking"])
        #expect(sos.status == 0 && sos.stdout.contains("SOS raised"), "\(sos.stdout)\(sos.stderr)")
        _ = try daemon.client().call(Methods.taskAccept, TaskParams(taskId: "task-1001"))
        let waiting = try Harness.outbox(daemon).pings
        print("pings still waiting when the SOS and the transition were queued: \(waiting)")
        let drained = try Harness.drain(daemon, timeout: .seconds(120))
        #expect(drained.sos == 0 && drained.pings == 0)
        let stats = try await http.request(.GET, "/sim/stats").decode(SimStats.self)
        let activity = try await http.request(.GET, "/sim/activity").decode(ActivityList.self)
        #expect(stats.uniquePings == 10_000)
        let sosAt = try #require(activity.sos.first?.receivedAt)
        #expect(activity.sos.count == 1 && activity.sos.first?.report.note == "test: overtaking")
        let acceptedAt = try #require(stats.statusUpdates.first { $0.taskId == "task-1001" && $0.status == .accepted }?.time)
        // Both arrived while the backlog still drained: batches of it came after each.
        let batchesAfterSOS = stats.batchLog.filter { $0.time > sosAt }.count
        let batchesAfterAccept = stats.batchLog.filter { $0.time > acceptedAt }.count
        print("backlog batches after the SOS: \(batchesAfterSOS), after the transition: \(batchesAfterAccept) of \(stats.batchLog.count)")
        #expect(batchesAfterSOS > 0 && batchesAfterAccept > 0, "\(stats.batchLog.map(\.time)) sos \(sosAt) accept \(acceptedAt); \(waiting) pings waited")
        try daemon.stop()
    }

    /// A backend that says "not now" to every API request for 10 minutes, two ways.
    enum NotNow: String, CaseIterable, CustomTestStringConvertible {
        /// Down and saying so: admission control's outage, 503 with the time left.
        case outage503
        /// A storm of 429s with `Retry-After: 600` (the fault plan, every API request).
        case storm429

        var testDescription: String { self == .outage503 ? "503 outage (admission control)" : "429 storm (fault plan)" }

        func begin(_ http: SimHTTP) async throws {
            switch self {
            case .outage503: _ = try await http.request(.POST, "/sim/admission/outage", json: ["seconds": 600])
            case .storm429: _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(errorRate: 1, errorStatus: 429, retryAfter: "600"))
            }
        }

        func end(_ http: SimHTTP) async throws {
            switch self {
            case .outage503: _ = try await http.request(.POST, "/sim/admission/outage", json: ["seconds": 0])
            case .storm429: _ = try await http.request(.DELETE, "/sim/faults")
            }
        }

        /// Requests the backend refused so far.
        func refused(_ http: SimHTTP) async throws -> Int {
            struct Admission: Decodable { var seconds: [AdmissionSecond] }
            switch self {
            case .outage503: return try await http.request(.GET, "/sim/admission").decode(Admission.self).seconds.map(\.refused).reduce(0, +)
            case .storm429: return try await http.request(.GET, "/sim/stats").decode(SimStats.self).faultsInjected
            }
        }
    }

    @Test("a backend that says \"not now\" for 10 minutes (Retry-After: 600): the SOS is tried every 2 s and goes as soon as the backend takes it; nothing else knocks", arguments: NotNow.allCases)
    func sosThroughNotNow(_ notNow: NotNow) async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: Self.config(sim, urgentRetry: 2), directory: TemporaryDirectory())
        try waitUntil("online", detail: daemon.log) { try Harness.outbox(daemon).link == .online }
        try await notNow.begin(http)
        // The sender hears the backend's Retry-After (a transition queued now waits for it).
        let note = "test: not now, \(notNow.rawValue)"
        _ = try daemon.client().call(Methods.sosRaise, SOSParams(note: note))
        try await waitUntil("the SOS refused three times", timeout: .seconds(20), detail: daemon.log) { try await notNow.refused(http) >= 3 }
        let during = try await notNow.refused(http)
        try await Task.sleep(for: .seconds(4))
        let later = try await notNow.refused(http)
        // Only the SOS knocks through the backend's wait: one attempt each 2 s (with its token and nothing else).
        #expect(later - during <= 3, "\(later - during) refusals in 4 s")
        #expect(daemon.log.contains("retry after 600 s") || daemon.log.contains("asked for quiet"), "\(daemon.log.suffix(2000))")
        if notNow == .storm429 { #expect(daemon.log.contains("retry after 600 s"), "\(daemon.log.suffix(2000))") }
        try await notNow.end(http)
        try waitUntil("the SOS acknowledged", timeout: .seconds(10), detail: daemon.log) { try Harness.outbox(daemon).sos == 0 }
        let activity = try await http.request(.GET, "/sim/activity").decode(ActivityList.self)
        #expect(activity.sos.map(\.report.note) == [note])
        try daemon.stop()
    }

    @Test("an SOS the backend does not take is repeated, through kill -9, until it does: stored once, announced as acknowledged")
    func repeatedUntilAcked() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let directory = TemporaryDirectory()
        let config = Self.config(sim, urgentRetry: 2)
        var daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: config, directory: directory)
        try waitUntil("online", detail: daemon.log) { try Harness.outbox(daemon).link == .online }
        _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(errorRate: 1, pathPrefix: BackendPaths.sos))
        let raised = try daemon.client().call(Methods.sosRaise, SOSParams(note: "test: repeated"))
        #expect(raised.state == .raised && raised.position == nil && raised.gps != .connected)
        // Every 2 s at least, though the backoff grows: five tries within 20 s.
        try await waitUntil("five SOS attempts", timeout: .seconds(20), detail: daemon.log) {
            try await http.request(.GET, "/sim/stats").decode(SimStats.self).faultsInjected >= 5
        }
        #expect(try Harness.outbox(daemon).sos == 1)
        try daemon.stop(signal: SIGKILL)

        daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: config, directory: directory)
        let events = try SubscribedConnection(daemon, topics: [Events.sosChanged.topic], timeout: 30)
        let before = try await http.request(.GET, "/sim/stats").decode(SimStats.self).faultsInjected
        try await waitUntil("the SOS tried again after the restart", timeout: .seconds(20), detail: daemon.log) {
            try await http.request(.GET, "/sim/stats").decode(SimStats.self).faultsInjected > before
        }
        _ = try await http.request(.DELETE, "/sim/faults")
        let acknowledged = try SOSView(decoding: try events.waitFor(Events.sosChanged.topic))
        #expect(acknowledged.state == .acknowledged && acknowledged.sosId == raised.sosId && acknowledged.note == "test: repeated")
        let activity = try await http.request(.GET, "/sim/activity").decode(ActivityList.self)
        #expect(activity.sos.map(\.report.sosId) == [raised.sosId])
        // The owner hears of the backend's answer (and announces it) before the outbox lets the item go, so that a
        // crash between the two sends it again (the key makes that harmless) rather than forgets it: the queue
        // empties just after the event (in one loaded run, after the look).
        try waitUntil("the SOS out of the queue", timeout: .seconds(10), detail: daemon.log) { try Harness.outbox(daemon).sos == 0 }
        #expect(daemon.log.contains("SOS raised") == false, "the restarted daemon raised nothing itself")
        try daemon.stop()
    }

    @Test("sos.raise: a long note is refused with the reason; without a backend an SOS is refused, not kept for nobody")
    func refusals() throws {
        let daemon = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"])
        let noBackend = DriverSafetyTests.gateError { _ = try daemon.client().call(Methods.sosRaise, SOSParams()) }
        #expect(noBackend?.kind == .unavailable && noBackend?.message.contains("no backend") == true, "\(String(describing: noBackend))")
        let sim = try SimProcess()
        let withBackend = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:1"], config: Self.config(sim))
        let long = DriverSafetyTests.gateError {
            _ = try withBackend.client().call(Methods.sosRaise, SOSParams(note: String(repeating: "x", count: 501)))
        }
        #expect(long?.kind == .invalidParams, "\(String(describing: long))")
        let cli = try runProgram(Binaries.path("driverctl"), ["--socket", daemon.socketPath, "sos"])
        #expect(cli.status != 0 && cli.stderr.contains("no backend"), "\(cli.stderr)")
        try daemon.stop()
        try withBackend.stop()
    }
}

extension SOSView {
    init(decoding params: JSONValue) throws {
        self = try JSONDecoder().decode(SOSView.self, from: Data(JSONWriter.bytes(params)))
    }
}
