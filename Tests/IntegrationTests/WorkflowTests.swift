import BackendContract
import Crypto
import DispatchSimCore
import DriverAPI
import DriverDomain
import DriverStore
import Foundation
import JSONRPC
import Testing

/// The driver's day through driverctl against the real reference backend over loopback.
@Suite("Delivery workflow through driverctl", .ownThread)
struct WorkflowTests {
    /// A daemon logged in to a fresh dispatch-sim, with the built-in world synced.
    struct Rig {
        let sim: SimProcess
        let http: SimHTTP
        let daemon: DaemonProcess
        let ctl = Binaries.path("driverctl")

        /// Without a GPS the speed is unknown, which the safety gate treats as moving; the ignition input says
        /// the engine is off, so the driver may complete deliveries.
        init(
            gpsd: String = "127.0.0.1:1", ignition: String? = "0", arguments: [String] = [], directory: TemporaryDirectory = TemporaryDirectory()
        ) throws {
            sim = try SimProcess()
            http = SimHTTP(base: sim.base)
            var config = Harness.config(backend: sim)
            if let ignition {
                try (ignition + "\n").write(toFile: directory.file("ignition"), atomically: true, encoding: .utf8)
                config += "\n[ignition]\npath = \"\(directory.file("ignition"))\"\n"
            }
            daemon = try DaemonProcess(arguments: ["--gpsd", gpsd] + arguments, config: config, directory: directory)
            try waitFor("the route synced") { try route().stops.count == 4 }
        }

        /// Runs driverctl; fails the test when it fails unless `expectFailure`.
        @discardableResult
        func ctl(_ arguments: String..., expectFailure: Bool = false) throws -> ProcessOutcome {
            let outcome = try runProgram(ctl, arguments, environment: ["DRIVERD_SOCKET": daemon.socketPath])
            if expectFailure {
                #expect(outcome.status == 1, "driverctl \(arguments) should fail: \(outcome.stdout)")
            } else {
                #expect(outcome.status == 0, "driverctl \(arguments): \(outcome.stderr)\n\(daemon.log)")
            }
            return outcome
        }

        func ctlJSON<T: Decodable>(_ type: T.Type, _ arguments: String...) throws -> T {
            let outcome = try runProgram(ctl, ["--json"] + arguments, environment: ["DRIVERD_SOCKET": daemon.socketPath])
            #expect(outcome.status == 0, "driverctl \(arguments): \(outcome.stderr)")
            return try JSONDecoder().decode(T.self, from: Data(outcome.stdout.utf8))
        }

        func route() throws -> RouteView { try daemon.client().call(Methods.routeGet, NoParams()) }

        func stats() async throws -> SimStats { try await http.request(.GET, "/sim/stats").decode(SimStats.self) }

        func statuses(_ stats: SimStats, _ task: String) -> [TaskStatus] {
            stats.statusUpdates.filter { $0.taskId == task }.map(\.status)
        }

        /// Cuts the backend off: every rider request is dropped unanswered and the WebSocket closed.
        func cutNetwork() async throws {
            _ = try await http.request(.PUT, "/sim/faults", json: FaultPlan(dropBeforeRate: 1))
            _ = try await http.request(.POST, "/sim/websockets/close")
        }

        func restoreNetwork() async throws { _ = try await http.request(.DELETE, "/sim/faults") }

        func waitFor(_ what: String, timeout: Duration = .seconds(30), _ condition: () throws -> Bool) throws {
            do {
                try waitUntil(what, timeout: timeout, detail: daemon.log, condition)
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    static let journey: [TaskStatus] = [.accepted, .arrivedAtStore, .pickedUp, .arrivedAtDestination, .delivered]

    /// What a daemon must never log, at any level: the built-in world's customer names and phones, its codes,
    /// and the texts the tests send.
    static let personalData = ["A. Customer", "B. Customer", "+49 151", "4812", "0000", "leave it at the door", "rang twice"]

    @Test("online: accept, arrived at store, picked up, arrived, a wrong OTP then the right one, delivered; nothing personal logged at trace level")
    func journeyOnline() async throws {
        let rig = try Rig(arguments: ["--log-level", "trace"])
        let card = try rig.ctl("next").stdout
        #expect(card.contains("Pick up at Pizzeria Da Marco") && card.contains("Accept"), "\(card)")
        #expect(try rig.ctl("navigate", "--app", "waze").stdout == "waze://?ll=49.021,12.097&navigate=yes\n")
        #expect(try rig.ctl("navigate", "--stop", "task-1001-dropoff").stdout == "geo:49.016,12.1005\n")
        try rig.ctl("accept")
        try rig.ctl("arrive")
        try rig.ctl("pickup")
        // After the pickup the route goes on to the other task's store: name the task from here.
        try rig.ctl("arrive", "--task", "task-1001")
        let wrong = try rig.ctl("pod", "otp", "0000", "--task", "task-1001", expectFailure: true)
        #expect(wrong.stderr.contains("wrong code") && wrong.stderr.contains("attempts left"), "\(wrong.stderr)")
        let early = try rig.ctl("deliver", "--task", "task-1001", expectFailure: true)
        #expect(early.stderr.contains("proof of delivery is required"), "\(early.stderr)")
        let proof = try rig.ctlJSON(PODResult.self, "pod", "otp", "4812", "--task", "task-1001")
        #expect(proof.task.pod == .accepted)
        let delivered = try rig.ctlJSON(TaskView.self, "deliver", "--task", "task-1001")
        // The reply tells the task as it is once on disk: still pending, or already acked when the backend's answer
        // came during the disk sync (seen under a loaded `make test`).
        #expect(delivered.status == .delivered)
        #expect(delivered.sync == .pending || (delivered.sync == .synced && delivered.backendStatus == .delivered), "\(delivered)")
        _ = try Harness.drain(rig.daemon)
        let stats = try await rig.stats()
        #expect(rig.statuses(stats, "task-1001") == Self.journey)
        #expect(stats.pods.filter { $0.taskId == "task-1001" }.map(\.accepted) == [false, true])
        // Delivered and synced: the task has left the route.
        try rig.waitFor("task-1001 to leave the route") { try !rig.route().tasks.contains { $0.id == "task-1001" } }
        _ = try await rig.http.request(.POST, "/sim/messages", json: ["driverId": "drv-1", "taskId": "task-1002", "text": "leave it at the door"])
        try rig.ctl("fail", "customer-unavailable", "--task", "task-1002", "--note", "rang twice", expectFailure: true)
        _ = try Harness.drain(rig.daemon)
        try rig.daemon.stop()
        let log = rig.daemon.log
        #expect(log.contains("<7>") && log.contains("task task-1001: deliver"), "a debug-level log of the whole journey")
        for text in Self.personalData {
            #expect(!log.contains(text), "the daemon logged \(text):\n\(log.split(separator: "\n").filter { $0.contains(text) }.prefix(3).joined(separator: "\n"))")
        }
    }

    @Test("offline from before the pickup until after the delivery: the backend ends with the same statuses, once each, in order, and the POD")
    func journeyOffline() async throws {
        let rig = try Rig()
        try rig.ctl("accept")
        try rig.ctl("arrive")
        _ = try Harness.drain(rig.daemon)
        try await rig.cutNetwork()
        try rig.ctl("pickup")
        try rig.ctl("arrive", "--task", "task-1001")
        let proof = try rig.ctlJSON(PODResult.self, "pod", "otp", "4812", "--task", "task-1001")
        #expect(proof.task.pod == .unverified, "offline, the code is queued unverified")
        let delivered = try rig.ctlJSON(TaskView.self, "deliver", "--task", "task-1001")
        #expect(delivered.status == .delivered && delivered.sync == .pending)
        let queued = try rig.ctl("queue").stdout
        #expect(queued.contains("3 transitions, 1 proof"), "\(queued)")
        #expect(try await rig.stats().statusUpdates.count == 2, "nothing got through while cut off")
        try await rig.restoreNetwork()
        _ = try Harness.drain(rig.daemon)
        let stats = try await rig.stats()
        #expect(rig.statuses(stats, "task-1001") == Self.journey)
        #expect(stats.statusUpdates.count == Set(stats.statusUpdates.map(\.idempotencyKey)).count)
        #expect(stats.pods.map(\.accepted) == [true] && stats.pods.first?.taskId == "task-1001")
        #expect(try Harness.outbox(rig.daemon).deadLetters == 0)
        try rig.daemon.stop()
    }

    @Test("two tasks on one route; the dispatcher re-orders and cancels; a customer-unavailable failure and the return to the vendor")
    func twoTasks() async throws {
        let rig = try Rig()
        let events = try SubscribedConnection(rig.daemon, topics: [Events.taskChanged.topic, Events.routeChanged.topic, Events.taskConflict.topic])
        try rig.ctl("accept")
        try rig.ctl("accept", "--task", "task-1002")
        // The route interleaves the tasks: store A, store B, customer A, customer B.
        try rig.ctl("arrive")
        try rig.ctl("pickup")
        #expect(try rig.route().stops.first?.id == "task-1002-pickup")
        try rig.ctl("arrive")
        try rig.ctl("pickup")
        #expect(try rig.route().stops.map(\.id) == ["task-1001-dropoff", "task-1002-dropoff"])
        // The dispatcher puts customer B first: a push, a sync, and the new order here.
        _ = try Harness.drain(rig.daemon)
        _ = try await rig.http.request(.POST, "/sim/drivers/drv-1/sequence", json: RouteSequence(sequence: [
            "task-1001-pickup", "task-1002-pickup", "task-1002-dropoff", "task-1001-dropoff",
        ]))
        try rig.waitFor("the dispatcher's order") { try rig.route().stops.map(\.id) == ["task-1002-dropoff", "task-1001-dropoff"] }
        // The driver puts A first again: a preview, then confirmed and sent.
        let preview = try rig.ctlJSON(ResequenceResult.self, "route", "--resequence", "task-1001-dropoff", "task-1002-dropoff")
        #expect(!preview.applied && preview.order.map(\.stopId) == ["task-1001-dropoff", "task-1002-dropoff"])
        #expect(try rig.route().stops.first?.id == "task-1002-dropoff", "a preview changes nothing")
        try rig.ctl("route", "--resequence", "task-1001-dropoff", "task-1002-dropoff", "--confirm")
        _ = try Harness.drain(rig.daemon)
        let active = try await rig.http.request(.GET, "/sim/tasks").body
        #expect(String(decoding: active, as: UTF8.self).contains("task-1002"))
        // Offline, the driver arrives at B while the dispatcher cancels B: the queued arrival is refused,
        // dead-lettered, and the task shows the backend's state.
        try await rig.cutNetwork()
        try rig.ctl("arrive", "--task", "task-1002")
        _ = try await rig.http.request(.POST, "/sim/tasks/task-1002/cancel")
        try await rig.restoreNetwork()
        _ = try Harness.drain(rig.daemon)
        try rig.waitFor("task-1002 to leave the route") { try !rig.route().stops.contains { $0.taskId == "task-1002" } }
        #expect(try Harness.outbox(rig.daemon).deadLetters == 1)
        let conflict = try events.waitFor(Events.taskConflict.topic)
        #expect(conflict["taskId"] == .string("task-1002") && conflict["backendStatus"] == .string("CANCELLED"), "\(conflict)")
        // Customer A does not open: a failure with its reason, then back to the vendor.
        try rig.ctl("arrive")
        try rig.ctl("fail", "customer-unavailable", "--note", "rang twice")
        let back = try rig.ctl("next").stdout
        #expect(back.contains("Pizzeria Da Marco") && back.contains("Return to vendor"), "\(back)")
        try rig.ctl("return")
        _ = try Harness.drain(rig.daemon)
        let stats = try await rig.stats()
        #expect(rig.statuses(stats, "task-1001") == [.accepted, .arrivedAtStore, .pickedUp, .arrivedAtDestination, .deliveryFailed, .returnedToVendor])
        #expect(rig.statuses(stats, "task-1002") == [.accepted, .arrivedAtStore, .pickedUp])
        try rig.waitFor("an empty route") { try rig.route().stops.isEmpty }
        #expect(try rig.ctl("next").stdout.contains("No stops left"))
        try rig.daemon.stop()
    }

    @Test("a photo proof: refused when it is not an image, spooled, uploaded with progress events, and the backend has the same bytes")
    func photoProof() async throws {
        let rig = try Rig()
        let events = try SubscribedConnection(rig.daemon, topics: [Events.podProgress.topic, Events.podVerdict.topic])
        for action in ["accept", "arrive", "pickup"] { try rig.ctl(action, "--task", "task-1002") }
        let directory = TemporaryDirectory()
        let notImage = directory.file("notes.txt")
        try "not a photo".write(toFile: notImage, atomically: true, encoding: .utf8)
        let refused = try rig.ctl("pod", "photo", notImage, "--task", "task-1002", expectFailure: true)
        #expect(refused.stderr.contains("is not a JPEG or PNG image"), "\(refused.stderr)")
        // A JPEG of 600 KiB: the upload goes out in several chunks.
        var generator = SplitMix64(seed: 5)
        let photo = Data([0xFF, 0xD8, 0xFF, 0xE0] + (0..<(600 * 1024)).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        let path = directory.file("handover.jpg")
        try photo.write(to: URL(fileURLWithPath: path))
        let result = try rig.ctlJSON(PODResult.self, "pod", "photo", path, "--task", "task-1002")
        let sha = SHA256.hash(data: photo).map { String(format: "%02x", $0) }.joined()
        #expect(result.sha256 == sha && result.bytes == photo.count && result.task.pod == .captured)
        try FileManager.default.removeItem(atPath: path)  // the daemon has its own copy
        let verdict = try events.waitFor(Events.podVerdict.topic)
        #expect(verdict["accepted"] == .bool(true))
        let progress = events.received.filter { $0.0 == Events.podProgress.topic }.compactMap { $0.1["sentBytes"]?.number }
        #expect(progress.count >= 5 && progress == progress.sorted(), "\(progress)")
        let total = events.received.last { $0.0 == Events.podProgress.topic }?.1["totalBytes"]?.number
        #expect(progress.last == total && (total ?? 0) > photo.count)
        let stats = try await rig.stats()
        #expect(stats.pods.last?.sha256 == sha && stats.pods.last?.bytes == photo.count)
        try rig.ctl("arrive", "--task", "task-1002")
        try rig.ctl("deliver", "--task", "task-1002")
        _ = try Harness.drain(rig.daemon)
        #expect(rig.statuses(try await rig.stats(), "task-1002") == Self.journey)
        try rig.daemon.stop()
    }
}

extension JSONValue {
    var number: Int? {
        guard case .number(let text) = self else { return nil }
        return Int(text)
    }
}

/// A raw connection subscribed to event topics, collecting notifications.
final class SubscribedConnection {
    let socket: RawConnection
    private(set) var received: [(String, JSONValue)] = []

    init(_ daemon: DaemonProcess, topics: [String], timeout: Double = 30) throws {
        socket = try RawConnection(daemon.socketPath, receiveTimeout: timeout)
        let topicList = topics.map { "\"\($0)\"" }.joined(separator: ",")
        try socket.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"events.subscribe\",\"params\":{\"topics\":[\(topicList)]}}\n")
        _ = try socket.readLine()
    }

    /// The oldest notification of `topic` not returned yet (others are kept for their own calls); its params.
    func waitFor(_ topic: String) throws -> JSONValue {
        if let index = received.firstIndex(where: { $0.0 == topic }) { return received.remove(at: index).1 }
        while let line = try socket.readLine() {
            let message = try JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))
            guard case .string(let method) = message["method"], let params = message["params"] else { continue }
            if method == topic { return params }
            received.append((method, params))
        }
        throw TestFailure("the daemon closed the connection before \(topic)")
    }
}
