import BackendContract
import Foundation
import Testing

/// The dispatch-sim binary as users run it: alone, with a scenario file, with a state file through kill -9,
/// and against its own OpenAPI document.
@Suite("dispatch-sim process", .ownThread)
struct DispatchSimProcessTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let openAPI = repository.appendingPathComponent("docs/backend-openapi.yaml").path

    @Test("alone, it starts the built-in world with the documented demo credentials, and stops cleanly on SIGTERM")
    func builtInWorld() async throws {
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        let token = try await http.login()
        let active = try await http.request(.GET, BackendPaths.activeTasks, token: token).decode(ActiveTasks.self)
        #expect(active.tasks.map(\.id) == ["task-1001", "task-1002"])
        #expect(sim.stop() == 0)
    }

    @Test("--scenario loads a world from JSON; an unusable scenario is refused with the reason")
    func scenarioFile() async throws {
        let directory = TemporaryDirectory("dispatch-sim-scenario")
        let scenario = directory.file("scenario.json")
        try """
        {"drivers": [{"id": "d-7", "username": "night-rider", "password": "s3cret"},
                     {"id": "d-8", "username": "early-bird", "password": "s3cret", "language": "pt-BR"}],
         "tasks": [{"id": "order-77", "driverId": "d-7", "podType": "PHOTO",
                    "pickup": {"address": "Depot", "lat": 52.52, "lng": 13.40, "name": "Depot", "phone": "+49 30 1"},
                    "dropoff": {"address": "Alexanderplatz", "lat": 52.5219, "lng": 13.4132, "name": "D. Customer", "phone": "+49 30 2"}}],
         "etaSpeed": 5}
        """.write(toFile: scenario, atomically: true, encoding: .utf8)
        let sim = try SimProcess(arguments: ["--scenario", scenario])
        let http = SimHTTP(base: sim.base)
        let token = try await http.login("night-rider", "s3cret")
        let active = try await http.request(.GET, BackendPaths.activeTasks, token: token).decode(ActiveTasks.self)
        #expect(active.tasks.map(\.id) == ["order-77"] && active.tasks[0].stops[1].address == "Alexanderplatz")
        // The driver's profile language comes with each login and refresh; none when the profile has none.
        let withLanguage = try await http.request(.POST, BackendPaths.login, json: LoginRequest(username: "early-bird", password: "s3cret"))
            .decode(TokenResponse.self)
        #expect(withLanguage.driverId == "d-8" && withLanguage.language == "pt-BR")
        let refreshed = try await http.request(.POST, BackendPaths.refresh, json: RefreshRequest(refreshToken: withLanguage.refreshToken))
            .decode(TokenResponse.self)
        #expect(refreshed.language == "pt-BR")
        let without = try await http.request(.POST, BackendPaths.login, json: LoginRequest(username: "night-rider", password: "s3cret"))
        #expect(try without.decode(TokenResponse.self).language == nil && !String(decoding: without.body, as: UTF8.self).contains("language"))
        sim.stop()

        let broken = directory.file("broken.json")
        try #"{"drivers": [], "tasks": []}"#.write(toFile: broken, atomically: true, encoding: .utf8)
        let refused = try runProgram(Binaries.path("dispatch-sim"), ["--port", "0", "--scenario", broken], timeout: .seconds(30))
        #expect(refused.status != 0 && refused.stderr.contains("no drivers"))
        let missing = try runProgram(Binaries.path("dispatch-sim"), ["--port", "0", "--scenario", directory.file("absent.json")], timeout: .seconds(30))
        #expect(missing.status != 0 && missing.stderr.contains("cannot load scenario"))
    }

    @Test("the rider WebSocket agrees to permessage-deflate when the client offers it")
    func webSocketCompression() async throws {
        let sim = try SimProcess()
        let token = try await SimHTTP(base: sim.base).login()
        let port = try #require(Int(sim.base.split(separator: ":").last ?? ""))
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(connected == 0)
        let request = "GET \(BackendPaths.webSocket(lastPushId: 0)) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\nAuthorization: Bearer \(token)\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var response = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &response, response.count, 0)
        let head = String(decoding: response[..<max(0, count)], as: UTF8.self).lowercased()
        #expect(head.hasPrefix("http/1.1 101"), "\(head)")
        #expect(head.contains("sec-websocket-extensions: permessage-deflate"), "\(head)")
        // The upgrade named the last push seen: the catch-up started, no hello needed.
        #expect(head.contains("\(BackendPaths.pushCatchUpHeader.lowercased()): 0\r\n"), "\(head)")
        close(fd)
        #expect(sim.stop() == 0)
    }

    @Test("--state: a transition and its idempotency key survive kill -9")
    func stateThroughKill() async throws {
        let directory = TemporaryDirectory("dispatch-sim-state")
        let state = directory.file("world.json")
        let first = try SimProcess(arguments: ["--state", state])
        var http = SimHTTP(base: first.base)
        let token = try await http.login()
        let applied = try await http.request(
            .PATCH, BackendPaths.taskStatus("task-1001"), token: token, headers: [("Idempotency-Key", "survivor")],
            json: StatusUpdateRequest(status: .accepted, location: Location(lat: 49.02, lng: 12.09, accuracy: 4), timestamp: 1_795_000_000))
        #expect(applied.status == 200)
        first.stop(signal: SIGKILL)

        let second = try SimProcess(arguments: ["--state", state])
        http = SimHTTP(base: second.base)
        let replay = try await http.request(
            .PATCH, BackendPaths.taskStatus("task-1001"), token: token, headers: [("Idempotency-Key", "survivor")],
            json: StatusUpdateRequest(status: .accepted, location: Location(lat: 49.02, lng: 12.09, accuracy: 4), timestamp: 1_795_000_000))
        #expect(replay.status == 200 && replay.body == applied.body)
        #expect(try await http.request(.GET, BackendPaths.activeTasks, token: token).decode(ActiveTasks.self).tasks[0].status == .accepted)
        second.stop()
    }

    /// `(method, path)` of every operation in the OpenAPI document.
    static func documentedOperations() throws -> [(method: String, path: String)] {
        var operations: [(String, String)] = []
        var path: String?
        for line in try String(contentsOfFile: openAPI, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
            } else if !line.hasPrefix(" ") {
                path = nil
            } else if let path, let method = ["get", "put", "post", "patch", "delete"].first(where: { line == "    \($0):" }) {
                operations.append((method.uppercased(), path))
            }
        }
        return operations
    }

    @Test("every operation of the OpenAPI document is served, and every path of the contract types is documented")
    func documentMatchesServer() async throws {
        let operations = try Self.documentedOperations()
        #expect(operations.count >= 20)
        let paths = Set(operations.map(\.path))
        for path in [BackendPaths.login, BackendPaths.refresh, BackendPaths.activeTasks, BackendPaths.locations, BackendPaths.pushes,
                     BackendPaths.route, BackendPaths.webSocket, BackendPaths.taskStatus("{taskId}"), BackendPaths.taskPOD("{taskId}"),
                     BackendPaths.taskETA("{taskId}")] {
            #expect(paths.contains(path), "\(path) is not in docs/backend-openapi.yaml")
        }
        let sim = try SimProcess()
        let http = SimHTTP(base: sim.base)
        for (method, path) in operations {
            let concrete = path.replacingOccurrences(of: "{taskId}", with: "task-1001").replacingOccurrences(of: "{driverId}", with: "drv-1")
                .replacingOccurrences(of: "{sha256}", with: String(repeating: "0", count: 64))
            let reply: SimHTTP.Reply
            do {
                reply = try await http.request(.init(rawValue: method), concrete)
            } catch {
                throw TestFailure("\(method) \(concrete): \(error); dispatch-sim running: \(sim.process.isRunning)\n\(sim.log)")
            }
            // An unknown route is Hummingbird's bare 404 (no body); every route of ours answers JSON.
            #expect(!reply.body.isEmpty || reply.status == 204 || reply.status == 200, "\(method) \(path) → \(reply.status) with no body")
            #expect(reply.status != 405, "\(method) \(path) is not routed")
        }
        sim.stop()
    }

    @Test("schemathesis finds no answer that breaks the OpenAPI document")
    func schemathesis() async throws {
        let tool = ProcessInfo.processInfo.environment["SCHEMATHESIS"]
            ?? Self.repository.appendingPathComponent(".build/tools/venv/bin/schemathesis").path
        try #require(FileManager.default.isExecutableFile(atPath: tool), "schemathesis is missing: run scripts/install-deps.sh (make test does)")
        let sim = try SimProcess()
        let token = try await SimHTTP(base: sim.base).login()
        // schemathesis keeps its caches in the working directory: a scratch one, not the repository.
        let scratch = TemporaryDirectory("schemathesis")
        let outcome = try runProgram(tool, [
            "run", Self.openAPI, "--url", sim.base, "-H", "Authorization: Bearer \(token)",
            "--exclude-path-regex", "^/sim/",
            "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance",
            "--max-examples", "25", "--seed", "20261122", "--no-color",
        ], directory: scratch.path, timeout: .seconds(300))
        #expect(outcome.status == 0, "schemathesis:\n\(outcome.stdout)\n\(outcome.stderr)")
        #expect(outcome.stdout.contains("passed"))
        sim.stop()
    }
}
