import ArgumentParser
import AsyncHTTPClient
import BackendContract
import DispatchSimCore
import DriverAPI
import DriverDomain
import DriverStore
import Foundation
import SQLiteKit
import JSONRPC
import NIOCore
import NIOHTTP1
import NMEASynth

/// The outbox and uplink, each beside a baseline from the same run: transition commit latency against a bare
/// SQLite insert+commit; uplink requests and bytes per minute against a naive client that POSTs every fix;
/// draining an 8 h backlog against the reference backend's raw ingest rate.
struct UplinkBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "uplink", abstract: "Outbox and uplink figures.")

    @Option(help: "Directory of the release binaries.") var bin: String
    @Option(help: "Seconds of real-time GPS per cadence window (moving, then stationary).") var seconds = 60
    @Option(help: "Pings in the offline backlog (8 h at 1 Hz).") var backlog = 28_800
    @Option(help: "Transitions committed per latency run.") var commits = 400

    func run() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }  // a scratch directory: one left behind harms no figure
        say("-- transition commit latency (synchronous=FULL, WAL), \(commits) commits, interleaved")
        try commitLatency(directory: directory)
        say("")
        say("-- 8 h backlog (\(backlog) pings) drained by driverd vs the same pings POSTed raw, 500 per request")
        try await drain(directory: directory)
        say("")
        say("-- uplink messages (HTTP requests + WebSocket frames) and bytes per minute, \(seconds) s real time per mode")
        try await cadence(directory: directory)
    }

    // MARK: Commit latency

    private func commitLatency(directory: String) throws {
        let outbox = Outbox(store: try Store(directory: try subdirectory(directory, "commit-outbox")))
        // The baseline: one connection, WAL, synchronous FULL, a prepared INSERT in its own transaction.
        let bare = try Database(path: try subdirectory(directory, "commit-bare") + "/bare.sqlite", readOnly: false)
        try bare.execute(sql: "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL")
        try bare.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT UNIQUE, payload BLOB)")
        let payload = try JSONEncoder().encode(StatusUpdateRequest(status: .accepted, location: Location(lat: 49.02, lng: 12.09, accuracy: 4), timestamp: 1_795_000_000))
        var outboxTimes: [Double] = [], bareTimes: [Double] = []
        for index in 0..<commits {
            let key = UUID().uuidString
            let start = ContinuousClock.now
            try outbox.enqueue(OutboxItemRecord(kind: .status, taskId: "task-\(index % 5)", idempotencyKey: key, payload: payload, createdAt: Double(index)))
            outboxTimes.append((ContinuousClock.now - start).microseconds)
            let bareStart = ContinuousClock.now
            try bare.inTransaction { try bare.execute(sql: "INSERT INTO t (k, payload) VALUES (?, ?)", arguments: [key, payload]) }
            bareTimes.append((ContinuousClock.now - bareStart).microseconds)
        }
        let (o50, o99, b50, b99) = (percentile(outboxTimes, 0.5), percentile(outboxTimes, 0.99), percentile(bareTimes, 0.5), percentile(bareTimes, 0.99))
        say("outbox.enqueue        p50 \(Int(o50)) µs   p99 \(Int(o99)) µs")
        say("bare insert+commit    p50 \(Int(b50)) µs   p99 \(Int(b99)) µs")
        say(String(format: "ratio                 p50 %.2f×   p99 %.2f×", o50 / b50, o99 / b99))
    }

    // MARK: Drain

    private func drain(directory: String) async throws {
        let state = try subdirectory(directory, "drain-state")
        let store = try Store(directory: state)
        let recorder = PingRecorder(store: store)
        let start = 1_795_852_800.0
        for index in 0..<backlog {
            let fix = Fix(time: start + Double(index), latitude: 52.52 + Double(index % 600) * 1e-5, longitude: 13.405, speed: 0, horizontalError: 4, mode: 3)
            recorder.append(PingRecord(fix: fix, motion: .stationary, reason: .interval, recordedAt: start + Double(index)), now: 0, nextSampleIn: 100)
        }
        recorder.flush()

        // Baseline: the same pings straight to a fresh reference backend, 500 per request, one after another.
        let raw = try SimServerProcess(bin: bin)
        defer { raw.stop() }
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let token = try await raw.login(http)
        let pings = (0..<backlog).map { LocationPing(lat: 52.52 + Double($0 % 600) * 1e-5, lng: 13.405, accuracy: 4, speed: 0, timestamp: start + Double($0)) }
        let rawStart = ContinuousClock.now
        for (number, chunk) in stride(from: 0, to: pings.count, by: 500).map({ Array(pings[$0..<min($0 + 500, pings.count)]) }).enumerated() {
            var request = HTTPClientRequest(url: raw.base + BackendPaths.locations)
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(LocationBatch(batchId: "raw-\(number)", pings: chunk))))
            let response = try await http.execute(request, timeout: .seconds(30))
            _ = try await response.body.collect(upTo: 1 << 20)
        }
        let rawSeconds = (ContinuousClock.now - rawStart).seconds
        try await http.shutdown()

        let sim = try SimServerProcess(bin: bin)
        defer { sim.stop() }
        let socket = directory + "/drain.sock"
        let config = directory + "/drain.toml"
        try """
            [backend]
            url = "\(sim.base)"
            username = "rider1"
            password = "demo-password"
            [shift]
            auto_start = true
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try spawn(bin + "/driverd", ["--config", config, "--socket", socket, "--state-dir", state, "--gpsd", "127.0.0.1:1", "--log-target", "stderr", "--log-level", "warning"], quiet: true)
        defer { daemon.terminate(); daemon.waitUntilExit() }
        try waitForSocket(socket)
        let client = try RPCClient(socketPath: socket, timeout: .seconds(120))
        let drainStart = ContinuousClock.now
        var status = try client.call(Methods.outboxFlush, NoParams())
        while status.pings > 0 {
            status = try client.call(Methods.outboxFlush, NoParams())
        }
        let drainSeconds = (ContinuousClock.now - drainStart).seconds
        let stats = try await sim.stats()
        say(String(format: "driverd drain         %.2f s  (%d unique pings at the backend, %d requests)", drainSeconds, stats.uniquePings, stats.requests))
        say(String(format: "raw ingest            %.2f s", rawSeconds))
        say(String(format: "ratio                 %.2f×", drainSeconds / rawSeconds))
    }

    // MARK: Cadence

    private func cadence(directory: String) async throws {
        for (name, route) in [("moving", RoutePresets.driving(laps: 50)), ("stationary", RoutePresets.parked(seconds: 3600))] {
            let log = directory + "/\(name).nmea"
            try NMEAWriter.log(route).write(toFile: log, atomically: true, encoding: .utf8)
            let fake = try RealTimeReceiver(log: log, scratch: try subdirectory(directory, "gpsfake-\(name)"))
            defer { fake.stop() }
            let port = fake.port
            usleep(2_000_000)
            let driverdSim = try SimServerProcess(bin: bin), naiveSim = try SimServerProcess(bin: bin)
            defer { driverdSim.stop(); naiveSim.stop() }
            let state = try subdirectory(directory, "cadence-\(name)")
            let socket = state + "/d.sock"
            try """
                [backend]
                url = "\(driverdSim.base)"
                username = "rider1"
                password = "demo-password"
                [shift]
                auto_start = true
                """.write(toFile: state + "/d.toml", atomically: true, encoding: .utf8)
            let daemon = try spawn(bin + "/driverd", ["--config", state + "/d.toml", "--socket", socket, "--state-dir", state + "/s", "--gpsd", "127.0.0.1:\(port)", "--log-target", "stderr", "--log-level", "warning"], quiet: true)
            defer { daemon.terminate(); daemon.waitUntilExit() }
            let naive = NaiveUplink(gpsdPort: port, sim: naiveSim)
            let naiveTask = Task { try await naive.run() }
            // Warm up (login, motion settled), then measure a window.
            try await Task.sleep(for: .seconds(12))
            let (d0, n0) = (try await driverdSim.stats(), try await naiveSim.stats())
            try await Task.sleep(for: .seconds(seconds))
            let (d1, n1) = (try await driverdSim.stats(), try await naiveSim.stats())
            naiveTask.cancel()
            let minutes = Double(seconds) / 60
            func perMinute(_ a: Int, _ b: Int) -> Double { Double(b - a) / minutes }
            // driverd's batches go over the WebSocket: its frames count as requests here.
            let (dr, db) = (perMinute(d0.requests + d0.webSocketFrames, d1.requests + d1.webSocketFrames),
                            perMinute(d0.requestBytes + d0.webSocketBytes, d1.requestBytes + d1.webSocketBytes))
            let (nr, nb) = (perMinute(n0.requests, n1.requests), perMinute(n0.requestBytes, n1.requestBytes))
            say(String(format: "%@ driverd   %.1f requests/min, %.0f bytes/min (%d pings)", name, dr, db, d1.uniquePings - d0.uniquePings))
            say(String(format: "%@ naive     %.1f requests/min, %.0f bytes/min (%d pings)", name, nr, nb, n1.uniquePings - n0.uniquePings))
            say(String(format: "%@ ratio     requests %.2f×, bytes %.2f×", name, dr / max(nr, 1e-9), db / max(nb, 1e-9)))
        }
    }

    private func subdirectory(_ directory: String, _ name: String) throws -> String {
        let path = directory + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    var microseconds: Double { seconds * 1e6 }
}

/// A dispatch-sim process on a free port.
final class SimServerProcess: @unchecked Sendable {
    let process: Process
    let base: String

    init(bin: String, arguments: [String] = []) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: bin + "/dispatch-sim")
        process.arguments = ["--port", "0", "--log-level", "warning"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        var line = Data()
        while let byte = try pipe.fileHandleForReading.read(upToCount: 1), let first = byte.first, first != UInt8(ascii: "\n") { line.append(first) }
        guard let url = String(decoding: line, as: UTF8.self).split(separator: " ").last else { throw ValidationError("dispatch-sim did not start") }
        base = String(url)
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    func login(_ http: HTTPClient) async throws -> String {
        var request = HTTPClientRequest(url: base + BackendPaths.login)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(LoginRequest(username: "rider1", password: "demo-password"))))
        let response = try await http.execute(request, timeout: .seconds(10))
        return try JSONDecoder().decode(TokenResponse.self, from: Data((try await response.body.collect(upTo: 1 << 20)).readableBytesView)).accessToken
    }

    func stats() async throws -> SimStats { try await get("/sim/stats") }

    func activity() async throws -> ActivityList { try await get("/sim/activity") }

    func get<T: Decodable>(_ path: String) async throws -> T {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: base + path), timeout: .seconds(10))
        return try JSONDecoder().decode(T.self, from: Data((try await response.body.collect(upTo: 64 << 20)).readableBytesView))
    }

    /// A `/sim/…` operation with a JSON body.
    func put(_ path: String, _ body: some Encodable) async throws { try await send(.PUT, path, body) }

    func post(_ path: String, _ body: some Encodable) async throws { try await send(.POST, path, body) }

    private func send(_ method: HTTPMethod, _ path: String, _ body: some Encodable) async throws {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(body)))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        guard response.status == .ok else { throw ValidationError("\(path): HTTP \(response.status.code)") }
    }
}

/// The baseline client: every fix gpsd reports becomes one POST.
struct NaiveUplink: Sendable {
    let gpsdPort: Int
    let sim: SimServerProcess

    func run() async throws {
        let http = HTTPClient.shared
        let token = try await sim.login(http)
        let pipe = Pipe()
        let gpspipe = try spawnPiped("/usr/bin/gpspipe", ["-w", "127.0.0.1:\(gpsdPort)"], stdout: pipe)
        defer {
            kill(gpspipe.processIdentifier, SIGKILL)
            gpspipe.waitUntilExit()
        }
        var buffer = Data()
        var count = 0
        while !Task.isCancelled {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                // gpsd also writes lines of other classes and shapes: those are the expected "not a TPV".
                guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any], object["class"] as? String == "TPV",
                      let lat = object["lat"] as? Double, let lon = object["lon"] as? Double else { continue }
                count += 1
                var request = HTTPClientRequest(url: sim.base + BackendPaths.locations)
                request.method = .POST
                request.headers.add(name: "Authorization", value: "Bearer \(token)")
                request.headers.add(name: "Content-Type", value: "application/json")
                let ping = LocationPing(lat: lat, lng: lon, accuracy: object["eph"] as? Double, speed: object["speed"] as? Double, heading: object["track"] as? Double, timestamp: Date().timeIntervalSince1970)
                request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(LocationBatch(batchId: "naive-\(count)", pings: [ping]))))
                let response = try await http.execute(request, timeout: .seconds(10))
                _ = try await response.body.collect(upTo: 1 << 20)
            }
        }
    }
}

func spawnPiped(_ path: String, _ arguments: [String], stdout: Pipe) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.standardOutput = stdout
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
}
