import ArgumentParser
import BackendContract
import DispatchSimCore
import DriverAPI
import DriverDomain
import DriverStore
import Foundation
import JSONRPC

/// Urgent items against a draining backlog: how long an SOS and a transition take to reach the backend while
/// driverd drains a backlog of pings over a slow link, beside the batch interval and the backlog's own drain
/// time (what an item queued behind it would wait) from the same run. Each trial kills driverd (-9), tops its
/// store up to the backlog, restarts it, and raises an SOS then a transition at a random point after the first
/// batch has landed.
struct UrgentBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "urgent", abstract: "SOS and transition latency behind a ping backlog.")

    @Option(help: "Directory of the release binaries.") var bin: String
    @Option(help: "Trials (one SOS and one transition each).") var trials = 50
    @Option(help: "Pings waiting at the start of each trial.") var backlog = 10_000
    @Option(help: "Latency of each request and WebSocket message at the backend, ms (a cellular link).") var linkMs = 100
    @Option(help: "The uplink's batch interval, seconds.") var batchSeconds = 10

    func run() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }  // a scratch directory: one left behind harms no figure
        // The built-in driver with one task per trial, so each trial has a transition to make.
        var scenario = Scenario.builtIn
        let template = scenario.tasks[0]
        scenario.tasks = (0...trials).map { index in
            var task = template
            task.id = "bench-\(index)"
            return task
        }
        scenario.sequences = [:]
        try JSONEncoder().encode(scenario).write(to: URL(fileURLWithPath: directory + "/scenario.json"))
        let sim = try SimServerProcess(bin: bin, arguments: ["--scenario", directory + "/scenario.json"])
        defer { sim.stop() }
        try await sim.put("/sim/faults", FaultPlan(latencyMs: linkMs, pathPrefix: "/api/v1/rider/"))

        let state = directory + "/state", socket = directory + "/d.sock", config = directory + "/d.toml"
        try """
            [backend]
            url = "\(sim.base)"
            username = "rider1"
            password = "demo-password"
            [shift]
            auto_start = true
            [uplink]
            moving_batch_seconds = \(batchSeconds)
            stationary_batch_seconds = \(batchSeconds)
            """.write(toFile: config, atomically: true, encoding: .utf8)
        func start() throws -> Process {
            let daemon = try spawn(
                bin + "/driverd", ["--config", config, "--socket", socket, "--state-dir", state, "--gpsd", "127.0.0.1:1", "--log-target", "stderr", "--log-level", "warning"],
                quiet: true)
            try waitForSocket(socket)
            return daemon
        }
        func kill9(_ daemon: Process) {
            kill(daemon.processIdentifier, SIGKILL)
            daemon.waitUntilExit()
        }
        // Log in and learn the tasks once.
        var daemon = try start()
        try await until("the route synced") { try RPCClient(socketPath: socket).call(Methods.routeGet, NoParams()).tasks.count > trials }
        kill9(daemon)

        let store = try Store(directory: state)
        let recorder = PingRecorder(store: store)
        var nextFix = Date().timeIntervalSince1970 - 86_400
        func topUp() throws {
            let waiting = try Outbox(store: store).depth().pings
            for _ in waiting..<max(waiting, backlog) {
                let fix = Fix(time: nextFix, latitude: 49.0134, longitude: 12.1016, speed: 0, horizontalError: 4, mode: 3)
                recorder.append(PingRecord(fix: fix, motion: .stationary, reason: .interval, recordedAt: nextFix), now: 0, nextSampleIn: 100)
                nextFix += 1
            }
            recorder.flush()
        }

        var sosSent: [String: Double] = [:], acceptSent: [String: Double] = [:]
        say("-- \(trials) trials: \(backlog) pings waiting, \(linkMs) ms per request and WebSocket message, batches every \(batchSeconds) s")
        for trial in 0..<trials {
            try topUp()
            let before = try await sim.stats().uniquePings
            daemon = try start()
            // The drain has begun: its first batch is at the backend.
            try await until("the first batch", everyMs: 10) { try await sim.stats().uniquePings > before }
            // At a random point of the drain, so the SOS meets batches at every stage of their round trip.
            usleep(UInt32.random(in: 0...UInt32(3 * linkMs * 1000)))
            let client = try RPCClient(socketPath: socket)
            let sosAt = Date().timeIntervalSince1970
            let sos = try client.call(Methods.sosRaise, SOSParams(note: "bench \(trial)"))
            sosSent[sos.sosId] = sosAt
            let taskId = "bench-\(trial)"
            acceptSent[taskId] = Date().timeIntervalSince1970
            _ = try client.call(Methods.taskAccept, TaskParams(taskId: taskId))
            try await until("the SOS and the transition sent") { try client.call(Methods.outboxStatus, NoParams()).items == 0 }
            kill9(daemon)
        }
        // The baseline: the same backlog drained with nothing urgent, from driverd's start to the last full batch
        // at the backend: what an item queued behind the backlog would wait.
        try topUp()
        let drainStart = Date().timeIntervalSince1970
        daemon = try start()
        try await until("the backlog drained") { try RPCClient(socketPath: socket).call(Methods.outboxStatus, NoParams()).pings == 0 }
        kill9(daemon)

        let stats = try await sim.stats()
        let activity = try await sim.activity()
        let sosLatency = activity.sos.compactMap { entry in sosSent[entry.report.sosId].map { (entry.receivedAt - $0) * 1000 } }
        let acceptLatency = stats.statusUpdates.compactMap { update in
            update.status == .accepted ? acceptSent[update.taskId].map { (update.time - $0) * 1000 } : nil
        }
        // Full batches go back to back; a remainder under one batch waits for the interval, as it should.
        let drain = stats.batchLog.filter { $0.time >= drainStart && $0.pings == 500 }
        let drainSeconds = (drain.last?.time ?? 0) - (drain.first?.time ?? 0)
        guard sosLatency.count == trials, acceptLatency.count == trials else {
            throw ValidationError("only \(sosLatency.count) SOS and \(acceptLatency.count) transitions of \(trials) reached the backend")
        }
        say(String(format: "SOS to the backend         p50 %.0f ms   p95 %.0f ms   max %.0f ms", percentile(sosLatency, 0.5), percentile(sosLatency, 0.95), sosLatency.max()!))
        say(String(format: "transition to the backend  p50 %.0f ms   p95 %.0f ms   max %.0f ms", percentile(acceptLatency, 0.5), percentile(acceptLatency, 0.95), acceptLatency.max()!))
        say(String(format: "baseline: batch interval %d s; the %d-ping backlog alone, driverd started to its last full batch: %.1f s (%d batches)", batchSeconds, backlog, drainSeconds, drain.count))
        say(String(format: "ratio SOS p95 / batch interval %.3f×; / backlog drain %.3f×", percentile(sosLatency, 0.95) / 1000 / Double(batchSeconds), percentile(sosLatency, 0.95) / 1000 / max(drainSeconds, 1e-9)))
    }

    /// Polls until `condition` holds, a minute at most; gently, since the daemon and the backend under test
    /// share the machine's two cores with this loop.
    private func until(_ what: String, everyMs: UInt32 = 50, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw ValidationError("\(what): not within a minute") }
            usleep(everyMs * 1000)
        }
    }
}
