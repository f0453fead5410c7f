import ArgumentParser
import AsyncHTTPClient
import BackendContract
import DispatchSimCore
import DriverAPI
import Foundation
import JSONRPC
import NIOCore
import NIOHTTP1

/// Driver actions online: the time from the action to driverd's reply (beside `agent.status`, a read-only
/// call on the same socket), and to the backend's ack as driverd reports it (beside the same transitions
/// PATCHed straight to the reference backend).
struct WorkflowBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "workflow", abstract: "Driver action latency.")

    @Option(help: "Directory of the release binaries.") var bin: String
    @Option(help: "Deliveries driven end to end (6 actions each).") var tasks = 30

    static let journey: [(String, TaskStatus?)] = [
        ("task.accept", .accepted), ("task.arrive", .arrivedAtStore), ("task.pickup", .pickedUp),
        ("task.arrive", .arrivedAtDestination), ("pod.otp", nil), ("task.deliver", .delivered),
    ]

    func run() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }  // a scratch directory: one left behind harms no figure
        let sim = try SimServerProcess(bin: bin)
        defer { sim.stop() }
        let ids = (0..<tasks).map { "bench-\($0)" }, rawIds = (0..<tasks).map { "raw-\($0)" }
        for id in ids + rawIds { try await sim.assign(Self.task(id)) }

        let socket = directory + "/workflow.sock", config = directory + "/workflow.toml"
        // No GPS here: the ignition input says the engine is off, so the safety gate lets deliveries through.
        try "0\n".write(toFile: directory + "/ignition", atomically: true, encoding: .utf8)
        try """
            [ignition]
            path = "\(directory)/ignition"
            [backend]
            url = "\(sim.base)"
            username = "rider1"
            password = "demo-password"
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try spawn(
            bin + "/driverd",
            ["--config", config, "--socket", socket, "--state-dir", directory + "/state", "--gpsd", "127.0.0.1:1", "--log-target", "stderr", "--log-level", "warning"],
            quiet: true)
        defer { daemon.terminate(); daemon.waitUntilExit() }
        try waitForSocket(socket)
        let client = try RPCClient(socketPath: socket, timeout: .seconds(30))
        let events = try RPCClient(socketPath: socket, timeout: .seconds(30))
        _ = try events.call(Methods.eventsSubscribe, SubscribeParams(topics: [Events.taskChanged.topic]))
        let deadline = ContinuousClock.now + .seconds(60)
        while try client.call(Methods.routeGet, NoParams()).tasks.count < tasks * 2 {
            guard ContinuousClock.now < deadline else { throw ValidationError("driverd did not sync the \(tasks * 2) tasks") }
            usleep(100_000)
        }

        // The acks as they arrive, timed on a thread of their own: the bench blocks on each reply meanwhile, and an
        // ack that comes before the reply would otherwise be timed when the reply came.
        let arrivals = AckArrivals()
        // Only this thread reads the events connection from here on.
        nonisolated(unsafe) let eventsReader = events
        let reader = Thread {
            while let message = try? eventsReader.readReply() {  // until the connection ends, as the run expects
                guard case .object(let params)? = message["params"], case .string(let id)? = params["id"],
                      case .string(let backendStatus)? = params["backendStatus"]
                else { continue }
                arrivals.record(id + "|" + backendStatus)
            }
        }
        reader.start()
        // Baseline: the same transitions PATCHed straight to the backend, one after each of driverd's, so that both
        // see the machine as it is at that moment (its speed drifts on a shared host). Each starts from a quiet
        // moment, as a driver's taps come seconds apart: nothing left over from the one before competes with it.
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let token = try await sim.login(http)
        let quiet: useconds_t = 5_000
        var reply: [Double] = [], ack: [Double] = [], status: [Double] = [], raw: [Double] = []
        for (id, rawId) in zip(ids, rawIds) {
            for (method, target) in Self.journey {
                usleep(quiet)
                if let target {
                    let start = ContinuousClock.now
                    try await sim.patch(
                        http, BackendPaths.taskStatus(rawId), json: StatusUpdateRequest(status: target, location: nil, timestamp: 0), token: token)
                    raw.append((ContinuousClock.now - start).microseconds)
                } else {
                    try await sim.post(http, BackendPaths.taskPOD(rawId), json: OTPSubmission(value: "4812"), token: token)
                }
                usleep(quiet)
                let start = ContinuousClock.now
                if method == "pod.otp" {
                    _ = try client.call(Methods.podOTP, OTPParams(taskId: id, otp: "4812"))
                    reply.append((ContinuousClock.now - start).microseconds)
                    continue
                }
                let methodDescriptor = [
                    "task.accept": Methods.taskAccept, "task.arrive": Methods.taskArrive, "task.pickup": Methods.taskPickup,
                    "task.deliver": Methods.taskDeliver,
                ][method]!
                _ = try client.call(methodDescriptor, TaskParams(taskId: id))
                reply.append((ContinuousClock.now - start).microseconds)
                // The ack: driverd raises task.changed with the backend's status once the backend took it.
                guard let acked = arrivals.wait(for: id + "|" + target!.rawValue, timeout: .seconds(30)) else {
                    throw ValidationError("no ack for \(id) \(target!.rawValue) within 30 s")
                }
                ack.append((acked - start).microseconds)
                let statusStart = ContinuousClock.now
                _ = try client.call(Methods.agentStatus, NoParams())
                status.append((ContinuousClock.now - statusStart).microseconds)
            }
        }
        try await http.shutdown()

        say("-- \(tasks) deliveries, \(reply.count) driver actions (accept, arrive, pickup, arrive, pod otp, deliver) online")
        func row(_ name: String, _ values: [Double]) {
            say(name.padding(toLength: 34, withPad: " ", startingAt: 0) + "p50 \(Int(percentile(values, 0.5))) µs   p99 \(Int(percentile(values, 0.99))) µs")
        }
        row("action → driverd reply", reply)
        row("agent.status round trip (baseline)", status)
        say(String(format: "ratio                             p50 %.2f×", percentile(reply, 0.5) / percentile(status, 0.5)))
        row("action → backend ack (transitions)", ack)
        row("raw PATCH round trip (baseline)", raw)
        say(String(format: "ratio                             p50 %.2f×", percentile(ack, 0.5) / percentile(raw, 0.5)))
    }

    /// When each (task, backend status) event arrived.
    final class AckArrivals: @unchecked Sendable {
        private let condition = NSCondition()
        private var seen: [String: ContinuousClock.Instant] = [:]

        func record(_ key: String) {
            let now = ContinuousClock.now
            condition.lock()
            if seen[key] == nil { seen[key] = now }
            condition.broadcast()
            condition.unlock()
        }

        func wait(for key: String, timeout: Duration) -> ContinuousClock.Instant? {
            let deadline = Date().addingTimeInterval(Double(timeout.components.seconds))
            condition.lock()
            defer { condition.unlock() }
            while seen[key] == nil {
                guard condition.wait(until: deadline) else { return nil }
            }
            return seen[key]
        }
    }

    static func task(_ id: String) -> Scenario.Task {
        Scenario.Task(
            id: id, driverId: "drv-1", status: .assigned,
            pickup: .init(address: "Haidplatz 8, Regensburg", lat: 49.021, lng: 12.097, name: "Vendor", phone: "+49 941 000001"),
            dropoff: .init(address: "Dachauplatz 4, Regensburg", lat: 49.016, lng: 12.1005, name: "Customer", phone: "+49 151 0000001"),
            podType: .otp, otp: "4812")
    }
}

extension SimServerProcess {
    func assign(_ task: Scenario.Task) async throws {
        var request = HTTPClientRequest(url: base + "/sim/tasks")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(task)))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        _ = try await response.body.collect(upTo: 1 << 20)
        guard response.status.code == 201 else { throw ValidationError("assigning \(task.id): HTTP \(response.status.code)") }
    }

    func patch(_ http: HTTPClient, _ path: String, json: some Encodable, token: String) async throws {
        try await send(http, .PATCH, path, json: json, token: token)
    }

    func post(_ http: HTTPClient, _ path: String, json: some Encodable, token: String) async throws {
        try await send(http, .POST, path, json: json, token: token)
    }

    private func send(_ http: HTTPClient, _ method: HTTPMethod, _ path: String, json: some Encodable, token: String) async throws {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: BackendPaths.idempotencyKeyHeader, value: UUID().uuidString)
        request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(json)))
        let response = try await http.execute(request, timeout: .seconds(10))
        _ = try await response.body.collect(upTo: 1 << 20)
        guard response.status.code == 200 else { throw ValidationError("\(method) \(path): HTTP \(response.status.code)") }
    }
}
