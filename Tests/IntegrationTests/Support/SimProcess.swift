import AsyncHTTPClient
import BackendContract
import DispatchSimCore
import Foundation
import NIOCore
import NIOHTTP1

/// A real dispatch-sim process on a free loopback port (it prints the port on its first line).
final class SimProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    /// http://127.0.0.1:PORT, or https:// when it serves TLS (`--tls-dir`).
    let base: String
    private let stderrFile: String
    let directory: TemporaryDirectory

    init(arguments: [String] = [], port: Int = 0, directory: TemporaryDirectory = TemporaryDirectory("dispatch-sim-test")) throws {
        self.directory = directory
        stderrFile = directory.file("dispatch-sim.stderr")
        let arguments = ["--port", String(port)] + arguments
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--pdeathsig", "KILL", Binaries.path("dispatch-sim")] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: Binaries.path("dispatch-sim"))
            process.arguments = arguments
        }
        let stdout = Pipe()
        process.standardOutput = stdout
        _ = FileManager.default.createFile(atPath: stderrFile, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: stderrFile)
        let process = self.process
        try LongLivedSpawner.run { try process.run() }
        // The first line names the port; a process that dies first closes the pipe.
        var line = Data()
        while let byte = try stdout.fileHandleForReading.read(upToCount: 1), let first = byte.first, first != UInt8(ascii: "\n") {
            line.append(first)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let portText = text.split(separator: ":").last, let port = Int(portText) else {
            process.waitUntilExit()
            throw TestFailure("dispatch-sim did not start: \(text)\n\((try? String(contentsOfFile: stderrFile, encoding: .utf8)) ?? "")")
        }
        self.port = port
        base = text.components(separatedBy: "listening on ").last ?? "http://127.0.0.1:\(port)"
    }
    var log: String { (try? String(contentsOfFile: stderrFile, encoding: .utf8)) ?? "" }

    @discardableResult
    func stop(signal: Int32 = SIGTERM) -> Int32 {
        stopChild(process, signal: signal)
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// A small HTTP client for tests against a dispatch-sim process.
struct SimHTTP {
    struct Reply {
        var status: Int
        var body: Data
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try JSONDecoder().decode(type, from: body) }
    }

    let base: String
    /// The shared client trusts the system's roots; a dispatch-sim serving HTTPS needs one trusting its CA.
    var client: HTTPClient = .shared

    func request(
        _ method: HTTPMethod, _ path: String, token: String? = nil, headers: [(String, String)] = [], json: (any Encodable)? = nil, body: Data? = nil
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(json)))
        }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/octet-stream")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 22)
        return Reply(status: Int(response.status.code), body: Data(body.readableBytesView))
    }

    /// The same, blocking this thread until the answer (NIO's threads do the work): for timed sections of a test
    /// that must not await, since a suspended test task may resume long after, behind the suite's other work.
    func requestBlocking(_ method: HTTPMethod, _ path: String, json: (any Encodable)? = nil) throws -> Reply {
        var request = try HTTPClient.Request(url: base + path, method: method)
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(try JSONEncoder().encode(json))
        }
        let response = try HTTPClient.shared.execute(request: request, deadline: .now() + .seconds(10)).wait()
        return Reply(status: Int(response.status.code), body: response.body.map { Data($0.readableBytesView) } ?? Data())
    }

    /// What a driver's unit sent: unique pings and heartbeats (`/sim/drivers/{id}/locations`).
    func locations(_ driverId: String = "drv-1") async throws -> DriverLocations {
        try await request(.GET, "/sim/drivers/\(driverId)/locations").decode(DriverLocations.self)
    }

    func login(_ username: String = "rider1", _ password: String = "demo-password") async throws -> String {
        try await request(.POST, BackendPaths.login, json: LoginRequest(username: username, password: password)).decode(TokenResponse.self).accessToken
    }
}
