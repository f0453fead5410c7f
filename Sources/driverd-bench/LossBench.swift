import ArgumentParser
import AsyncHTTPClient
import BackendContract
import DispatchSimCore
import DriverAPI
import Foundation
import JSONRPC
import NIOCore
import NIOHTTP1
import NMEASynth
import Synchronization

/// A link that loses requests, beside a clean one in the same run: real driverd processes, each moving on its own
/// real gpsd, each against its own dispatch-sim that loses that share of requests and of WebSocket messages (half
/// before handling, half after: the request lost, or its answer). For each link: a transition's delivery (the
/// driver's tap to the backend's record of it), how old the backend's newest ping is (sampled every half second),
/// a diagnostic bundle's upload, the messages the unit sent (HTTP requests and WebSocket frames) beside the clean
/// link's, and how much of the time its WebSocket was open.
struct LossBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loss", abstract: "Lossy links beside a clean one: transitions, ping freshness, a bundle, extra messages, the WebSocket.")

    @Option(help: "Directory with the driverd and dispatch-sim binaries.") var bin: String
    @Option(help: "Directory with the driverd of the release to compare with, on the same links (this release's dispatch-sim).") var baselineBin: String?
    @Option(help: "Measured seconds per link (after a warm-up).") var seconds = 300
    @Option(help: "The links' loss, comma-separated shares of requests and messages (0 is the clean link).") var losses = "0,0.1,0.3"
    @Option(help: "Seconds between the driver's transitions.") var every = 10.0
    @Option(help: "diag.chunk_bytes: the bundle's chunk size (the bench's bundle is about 3.5 KB: about 10 chunks).") var chunkBytes = 384
    @Option(help: "Keep each run's directory (driverd's log) here.") var keep: String?

    struct Row {
        var transitions: [Double]
        var undelivered: Int
        var pingAges: [Double]
        var bundleSeconds: Double?
        var chunks: Int?
        var messages: Int
        /// Of `messages`, those the link lost (dispatch-sim's injected faults).
        var lost: Int
        var webSocketUp: Double
        var webSocketBatches: Int
        var batches: Int
        /// Requests by route (dispatch-sim's `SimStats.route(of:)`) and WebSocket frames (`websocket frames`).
        var byRoute: [String: Int]
    }

    func run() throws {
        let rates = losses.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard !rates.isEmpty, rates.allSatisfy({ (0..<1).contains($0) }) else { throw ValidationError("--losses: shares from 0 to below 1") }
        let builds = [("this release", bin)] + (baselineBin.map { [("baseline", $0)] } ?? [])
        let runs = builds.flatMap { build in rates.map { (build, $0) } }
        let directory = try keep ?? makeTemporaryDirectory()
        // Expected answer: a scratch directory that cannot be removed harms no figure (it stays in /tmp).
        defer { if keep == nil { try? FileManager.default.removeItem(atPath: directory) } }
        say("Lossy links: \(runs.count) units at once, each moving on its own gpsd against its own dispatch-sim, \(seconds) s measured after a warm-up;")
        say("a transition every \(Int(every)) s (tap → the backend's record), the backend's newest batch's age every 0.5 s, a diagnostic bundle")
        say("(\(chunkBytes)-byte chunks) asked 10 s in; messages = HTTP requests + WebSocket frames the backend saw (lost ones included);")
        say("extra = more than the clean link's; beyond loss = extra less the lost messages themselves (reconnects, refetches, resends).")
        say("Goals (issue 66): p95 transition ≤ 2× clean or 15 s; ping age p95 ≤ 2× clean + 10 s; bundle ≤ 60 s; extra messages ≤ 20 %.")
        say("Each message sent until it arrives once would cost 1/(1 − p) − 1 more on a link losing a share p ("
            + rates.filter { $0 > 0 }.map { "\(Self.percent($0)): \(Self.percent(1 / (1 - $0) - 1))" }.joined(separator: ", ")
            + "); a lost batch costs less: it rides with the next one (`LocationBatch.carried`).")
        let rows = Mutex<[Int: Row]>([:])
        let failures = Mutex<[String]>([])
        let threads = runs.enumerated().map { index, run in
            Thread {
                do {
                    let row = try measure(bin: run.0.1, loss: run.1, scratch: directory + "/\(index)")
                    rows.withLock { $0[index] = row }
                } catch {
                    failures.withLock { $0.append("\(run.0.0), loss \(run.1): \(error)") }
                }
            }
        }
        for thread in threads { thread.start() }
        for thread in threads { while !thread.isFinished { usleep(100_000) } }
        let measured = rows.withLock { $0 }
        say(pad("build", 14) + pad("loss", 6) + pad("transition p50/p95 s", 22) + pad("late", 6) + pad("ping age p50/p95 s", 20) + pad("bundle", 16)
            + pad("messages", 10) + pad("lost", 6) + pad("extra", 8) + pad("beyond loss", 13) + pad("WebSocket up", 14) + "batches over it")
        for (index, run) in runs.enumerated() {
            guard let row = measured[index] else {
                say(pad(run.0.0, 14) + pad(Self.percent(run.1), 6) + "failed")
                continue
            }
            let clean = runs.firstIndex { $0.0.1 == run.0.1 && $0.1 == 0 }.flatMap { measured[$0] }
            let extra = clean.map { $0.messages > 0 ? Self.percent(Double(row.messages) / Double($0.messages) - 1) : "-" } ?? "-"
            let beyond = clean.map { $0.messages > 0 ? Self.percent(Double(row.messages - row.lost) / Double($0.messages) - 1) : "-" } ?? "-"
            let bundle = row.bundleSeconds.map { String(format: "%.1f s (%d)", $0, row.chunks ?? 0) } ?? "not done"
            say(pad(run.0.0, 14) + pad(Self.percent(run.1), 6)
                + pad(String(format: "%.1f / %.1f", Self.percentile(row.transitions, 0.5), Self.percentile(row.transitions, 0.95)), 22)
                + pad("\(row.undelivered)", 6)
                + pad(String(format: "%.1f / %.1f", Self.percentile(row.pingAges, 0.5), Self.percentile(row.pingAges, 0.95)), 20)
                + pad(bundle, 16) + pad("\(row.messages)", 10) + pad("\(row.lost)", 6) + pad(extra, 8) + pad(beyond, 13) + pad(Self.percent(row.webSocketUp), 14)
                + "\(row.webSocketBatches) of \(row.batches)")
        }
        say("late: transitions the backend had not recorded by the window's end (counted as the window's length in the percentiles).")
        for (index, run) in runs.enumerated() where run.1 > 0 {
            guard let row = measured[index], let clean = runs.firstIndex(where: { $0.0.1 == run.0.1 && $0.1 == 0 }).flatMap({ measured[$0] }) else { continue }
            let routes = Set(row.byRoute.keys).union(clean.byRoute.keys)
            let beyond = routes.map { ($0, row.byRoute[$0, default: 0] - clean.byRoute[$0, default: 0]) }.filter { $0.1 != 0 }.sorted { abs($0.1) > abs($1.1) }
            say("\(run.0.0), loss \(Self.percent(run.1)), messages beyond the clean link's by route: "
                + beyond.prefix(6).map { "\($0.0) \($0.1 > 0 ? "+" : "")\($0.1)" }.joined(separator: ", "))
        }
        for failure in failures.withLock({ $0 }) { say("failed: \(failure)") }
        if !failures.withLock({ $0.isEmpty }) { throw ExitCode.failure }
    }

    private func measure(bin: String, loss: Double, scratch: String) throws -> Row {
        try FileManager.default.createDirectory(atPath: scratch + "/state", withIntermediateDirectories: true)
        let warmup = 30, total = warmup + seconds + 60
        let log = scratch + "/route.nmea"
        try NMEAWriter.log(RoutePresets.driving(laps: total / 160 + 1)).write(toFile: log, atomically: true, encoding: .utf8)
        // This release's dispatch-sim for every build: the same links (an earlier one loses no WebSocket message).
        let sim = try SimServerProcess(bin: self.bin, arguments: [
            "--fault-drop-before", "\(loss / 2)", "--fault-drop-after", "\(loss / 2)", "--seed", "\(Int(loss * 1000) + 7)",
        ])
        defer { sim.stop() }
        let transitions = Int(Double(seconds) / every)
        let ids = (0..<transitions).map { "loss-\($0)" }
        for id in ids { try Self.call(sim.base, .POST, "/sim/tasks", body: try JSONEncoder().encode(WorkflowBench.task(id)), expect: 201) }
        let fake = try RealTimeReceiver(log: log, scratch: scratch)
        defer { fake.stop() }
        try """
            [shift]
            auto_start = true
            [backend]
            url = "\(sim.base)"
            username = "rider1"
            password = "demo-password"
            [diag]
            chunk_bytes = \(chunkBytes)
            """.write(toFile: scratch + "/driverd.toml", atomically: true, encoding: .utf8)
        let started = Date()
        let socket = scratch + "/driverd.sock"
        let daemon = try spawn(bin + "/driverd", [
            "--socket", socket, "--state-dir", scratch + "/state", "--config", scratch + "/driverd.toml",
            "--gpsd", "127.0.0.1:\(fake.port)", "--log-level", keep == nil ? "warning" : "info", "--log-target", "stderr",
        ], quiet: true, log: scratch + "/driverd.log")
        defer {
            if daemon.isRunning {
                daemon.terminate()
                daemon.waitUntilExit()
            }
        }
        try waitForSocket(socket)
        let client = try RPCClient(socketPath: socket, timeout: .seconds(30))
        // The tasks synced over the lossy link too: the warm-up waits for them (at most two minutes).
        let synced = Date().addingTimeInterval(120)
        while try client.call(Methods.routeGet, NoParams()).tasks.count < transitions {
            guard Date() < synced else { throw ValidationError("driverd did not sync the \(transitions) tasks within 120 s") }
            usleep(500_000)
        }
        let untilWindow = Double(warmup) - Date().timeIntervalSince(started)
        if untilWindow > 0 { usleep(UInt32(untilWindow * 1e6)) }
        let before = try Self.stats(sim.base)
        let windowStart = Date().timeIntervalSince1970, windowEnd = windowStart + Double(seconds)
        var tapped: [String: Double] = [:]
        var socketSeconds = 0, samples = 0
        var bundleAsked: Double?, bundleDone: Double?, chunks: Int?
        var next = 0
        while Date().timeIntervalSince1970 < windowEnd {
            let now = Date().timeIntervalSince1970
            if next < ids.count, now >= windowStart + Double(next) * every {
                tapped[ids[next]] = now
                _ = try client.call(Methods.taskAccept, TaskParams(taskId: ids[next]))
                next += 1
            }
            if bundleAsked == nil, now >= windowStart + 10 {
                let request = FleetRequest(requestId: "loss-bundle", kind: .diagnosticBundle, windowSeconds: 600)
                try Self.call(sim.base, .PUT, "/sim/requests?driverId=drv-1", body: try JSONEncoder().encode(request), expect: 200)
                bundleAsked = now
            }
            if let asked = bundleAsked, bundleDone == nil,
               let upload = try Self.overview(sim.base).uploads.first(where: { $0.requestId == "loss-bundle" }) {
                chunks = upload.count
                if upload.complete { bundleDone = Date().timeIntervalSince1970 - asked }
            }
            if try Self.stats(sim.base).webSockets > 0 { socketSeconds += 1 }
            samples += 1
            usleep(1_000_000)
        }
        let after = try Self.stats(sim.base)
        // The backend's record of each tap; one it never recorded counts as the window's length.
        var delays: [Double] = [], undelivered = 0
        for (id, time) in tapped {
            if let record = after.statusUpdates.first(where: { $0.taskId == id && $0.status == .accepted }) {
                delays.append(max(0, record.time - time))
            } else {
                undelivered += 1
                delays.append(Double(seconds))
            }
        }
        // The newest batch's age at the backend, every half second of the window.
        let arrivals = after.batchLog.map(\.time).sorted()
        var ages: [Double] = []
        var index = 0
        for step in 0..<(seconds * 2) {
            let time = windowStart + Double(step) / 2
            while index < arrivals.count, arrivals[index] <= time { index += 1 }
            if index > 0 { ages.append(time - arrivals[index - 1]) }
        }
        return Row(
            transitions: delays, undelivered: undelivered, pingAges: ages, bundleSeconds: bundleDone, chunks: chunks,
            messages: after.requests + after.webSocketFrames - before.requests - before.webSocketFrames,
            lost: after.faultsInjected - before.faultsInjected,
            webSocketUp: samples > 0 ? Double(socketSeconds) / Double(samples) : 0,
            webSocketBatches: after.webSocketBatches - before.webSocketBatches, batches: after.batches - before.batches,
            byRoute: after.requestsByRoute.merging(before.requestsByRoute.mapValues { -$0 }, uniquingKeysWith: +)
                .merging(["websocket frames": after.webSocketFrames - before.webSocketFrames], uniquingKeysWith: +))
    }

    static func stats(_ base: String) throws -> SimStats {
        try JSONDecoder().decode(SimStats.self, from: try call(base, .GET, "/sim/stats", expect: 200))
    }

    static func overview(_ base: String) throws -> FleetOverview {
        try JSONDecoder().decode(FleetOverview.self, from: try call(base, .GET, "/sim/requests", expect: 200))
    }

    /// One request to dispatch-sim's own API (never faulted), blocking: this runs on one of the bench's threads.
    @discardableResult
    static func call(_ base: String, _ method: HTTPMethod, _ path: String, body: Data? = nil, expect status: Int) throws -> Data {
        var request = try HTTPClient.Request(url: base + path, method: method)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(body)
        }
        let response = try HTTPClient.shared.execute(request: request, deadline: .now() + .seconds(10)).wait()
        let data = Data((response.body ?? ByteBuffer()).readableBytesView)
        guard response.status.code == status else {
            throw ValidationError("\(method) \(path): HTTP \(response.status.code) \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
        return data
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }

    static func percent(_ share: Double) -> String { String(format: "%.0f %%", share * 100) }

    private func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(1, width - text.count)) }
}
