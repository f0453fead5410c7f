import DriverAPI
import AsyncHTTPClient
import BackendContract
import DispatchSim
import DispatchSimCore
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// A reference backend on a free loopback port for one test, and an HTTP client for it. Stops by itself.
struct SimHarness: Sendable {
    struct Reply: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: Data

        func decode<T: Decodable>(_ type: T.Type) throws -> T { try JSONDecoder().decode(type, from: body) }
        var error: BackendErrorBody.Detail? { (try? decode(BackendErrorBody.self))?.error }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    let port: Int
    let http: HTTPClient
    var base: String { "http://127.0.0.1:\(port)" }

    static func run<T: Sendable>(_ options: SimOptions = SimOptions(), _ body: @Sendable (SimHarness) async throws -> T) async throws -> T {
        var options = options
        options.port = 0
        var logger = Logger(label: "dispatch-sim-test")
        logger.logLevel = .warning
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let app = try await SimServer.makeApplication(options, logger: logger) { port in portContinuation.yield(port) }
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        return try await withThrowingTaskGroup(of: T?.self) { tasks in
            tasks.addTask {
                try await group.run()
                return nil
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CancellationError() }
            let harness = SimHarness(port: port, http: http)
            let result: Result<T, any Error>
            do {
                result = .success(try await body(harness))
            } catch {
                result = .failure(error)
            }
            try await http.shutdown()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return try result.get()
        }
    }

    func request(
        _ method: HTTPMethod, _ path: String, token: String? = nil, headers: [(String, String)] = [],
        body: Data? = nil, contentType: String = "application/json"
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await http.execute(request, timeout: .seconds(10))
        let bytes = try await response.body.collect(upTo: 16 * 1024 * 1024)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Data(bytes.readableBytesView))
    }

    func json(_ method: HTTPMethod, _ path: String, _ value: some Encodable, token: String? = nil, headers: [(String, String)] = []) async throws -> Reply {
        try await request(method, path, token: token, headers: headers, body: JSONEncoder().encode(value))
    }

    func login(_ username: String = "rider1", _ password: String = "demo-password") async throws -> TokenResponse {
        try await json(.POST, BackendPaths.login, LoginRequest(username: username, password: password)).decode(TokenResponse.self)
    }

    func status(_ taskId: String, _ status: TaskStatusName, key: String, token: String, reason: String? = nil) async throws -> Reply {
        var body: [String: AnyEncodable] = ["status": .init(status.rawValue), "timestamp": .init(1_795_000_000.5)]
        if let reason { body["reason"] = .init(reason) }
        return try await json(.PATCH, BackendPaths.taskStatus(taskId), body, token: token, headers: [("Idempotency-Key", key)])
    }

    func stats() async throws -> SimStats { try await request(.GET, "/sim/stats").decode(SimStats.self) }

    /// Waits up to 5 s for the server to count an open WebSocket (the upgrade is done on the client's side first).
    func waitForWebSocket() async throws {
        for _ in 0..<100 where try await stats().webSockets < 1 { try await Task.sleep(for: .milliseconds(50)) }
    }

    /// Moves a task forward through the given statuses with fresh keys.
    func advance(_ taskId: String, through statuses: [TaskStatusName], token: String) async throws {
        for status in statuses {
            let reply = try await self.status(taskId, status, key: UUID().uuidString, token: token)
            guard reply.status == 200 else { throw HarnessError("\(status) → \(reply.status) \(reply.text)") }
        }
    }
}

/// Status wire names, typed so a test cannot misspell one.
enum TaskStatusName: String, Sendable {
    case ACCEPTED, ARRIVED_AT_STORE, PICKED_UP, ARRIVED_AT_DESTINATION, DELIVERED, DELIVERY_FAILED, RETURNED_TO_VENDOR, CANCELLED
}

struct AnyEncodable: Encodable, Sendable {
    let encodeValue: @Sendable (any Encoder) throws -> Void
    init<T: Encodable & Sendable>(_ value: T) { encodeValue = { try value.encode(to: $0) } }
    func encode(to encoder: any Encoder) throws { try encodeValue(encoder) }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
