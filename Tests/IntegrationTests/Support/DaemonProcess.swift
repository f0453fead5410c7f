import Foundation
import JSONRPC
import Testing

/// Where `swift build` put the binaries: `$DRIVERD_BIN_DIR`, else beside the test bundle.
enum Binaries {
    static let directory: URL = {
        if let dir = ProcessInfo.processInfo.environment["DRIVERD_BIN_DIR"] {
            return URL(fileURLWithPath: dir)
        }
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return exe.deletingLastPathComponent()
    }()

    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
}

/// A temporary directory that removes itself.
final class TemporaryDirectory {
    let path: String

    init(_ label: String = "driverd-test") {
        let template = "/tmp/\(label)-XXXXXX"
        var bytes = Array(template.utf8CString)
        path = bytes.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// The result of a finished child process.
struct ProcessOutcome {
    let status: Int32
    let reason: Process.TerminationReason
    let stdout: String
    let stderr: String
}

/// Runs a program to completion (bounded by `timeout`) and captures its output.
@discardableResult
func runProgram(
    _ path: String, _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil,
    directory: String? = nil, timeout: Duration = .seconds(60)
) throws -> ProcessOutcome {
    let process = Process()
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let input = Pipe()
    process.standardInput = input
    try process.run()
    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
    try? input.fileHandleForWriting.close()
    // Read both pipes concurrently so a chatty child never blocks on a full pipe.
    nonisolated(unsafe) var outData = Data(), errData = Data()
    let group = DispatchGroup()
    DispatchQueue.global().async(group: group) { outData = out.fileHandleForReading.readDataToEndOfFile() }
    DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
    let deadline = ContinuousClock.now + timeout
    while process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
    if process.isRunning {
        kill(process.processIdentifier, SIGKILL)
        Issue.record("\(path) \(arguments) did not finish within \(timeout)")
    }
    process.waitUntilExit()
    group.wait()
    return ProcessOutcome(
        status: process.terminationStatus, reason: process.terminationReason,
        stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
}

/// A real driverd process with its own state directory and socket.
final class DaemonProcess {
    let directory: TemporaryDirectory
    let socketPath: String
    let process = Process()
    private let stderrFile: String

    /// Starts driverd and waits until its socket answers.
    init(
        arguments extra: [String] = [], environment: [String: String] = [:], config: String? = nil,
        waitForSocket: Bool = true, directory: TemporaryDirectory = TemporaryDirectory(), onShift: Bool = true
    ) throws {
        self.directory = directory
        socketPath = directory.file("driverd.sock")
        // One log per process: a daemon restarted in the same directory must not truncate its predecessor's.
        stderrFile = directory.file("driverd-\(UUID().uuidString.prefix(8)).stderr")
        var arguments = ["--socket", socketPath, "--state-dir", directory.file("state"), "--log-target", "stderr"]
        let configPath = directory.file("driverd.toml")
        // Off shift nothing is recorded: tests about tracking start on shift unless they say otherwise.
        let shiftSection = onShift && !(config ?? "").contains("[shift]") ? "\n[shift]\nauto_start = true\n" : ""
        if config != nil || !shiftSection.isEmpty {
            try ((config ?? "") + shiftSection).write(toFile: configPath, atomically: true, encoding: .utf8)
        }
        arguments += ["--config", configPath]
        // setpriv --pdeathsig: the daemon dies with the test process even if that crashes.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--pdeathsig", "KILL", Binaries.path("driverd")] + arguments + extra
        } else {
            process.executableURL = URL(fileURLWithPath: Binaries.path("driverd"))
            process.arguments = arguments + extra
        }
        var env = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "JOURNAL_STREAM"] {
            env[key] = nil
        }
        process.environment = env.merging(environment) { $1 }
        _ = FileManager.default.createFile(atPath: stderrFile, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: stderrFile)
        process.standardOutput = FileHandle.nullDevice
        let process = self.process
        try LongLivedSpawner.run { try process.run() }
        if waitForSocket { try waitUntilListening() }
    }

    var pid: Int32 { process.processIdentifier }

    func waitUntilListening(timeout: Duration = .seconds(20)) throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if case .live = UnixSocketConnector.probe(socketPath) { return }
            if !process.isRunning { throw TestFailure("driverd exited early:\n\(log)") }
            usleep(20_000)
        }
        throw TestFailure("driverd did not listen on \(socketPath) within \(timeout):\n\(log)")
    }

    func client(timeout: Duration? = .seconds(10)) throws -> RPCClient {
        try RPCClient(socketPath: socketPath, timeout: timeout)
    }

    var log: String { (try? String(contentsOfFile: stderrFile, encoding: .utf8)) ?? "" }

    /// Sends `signal` and waits for the process to exit; returns its exit status.
    @discardableResult
    func stop(signal: Int32 = SIGTERM, timeout: Duration = .seconds(20)) throws -> Int32 {
        guard stopChild(process, signal: signal, timeout: timeout) else {
            throw TestFailure("driverd did not stop within \(timeout) after signal \(signal):\n\(log)")
        }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        // Every daemon's log is kept for the privacy check that runs after the suite (scripts/check-log-privacy.sh).
        if let directory = ProcessInfo.processInfo.environment["DRIVERD_TEST_LOG_DIR"], !directory.isEmpty {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try? FileManager.default.copyItem(atPath: stderrFile, toPath: "\(directory)/driverd-\(UUID().uuidString).log")
        }
    }
}

/// Sends `signal` and waits up to `timeout` for the child to exit; kills it otherwise. False when it had to be
/// killed.
@discardableResult
func stopChild(_ process: Process, signal: Int32, timeout: Duration = .seconds(20)) -> Bool {
    if process.isRunning { kill(process.processIdentifier, signal) }
    let deadline = ContinuousClock.now + timeout
    while process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
    let inTime = !process.isRunning
    if !inTime { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    return inTime
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A raw connection for sending bytes the client library would never send.
final class RawConnection {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(_ path: String, receiveTimeout: Double = 10) throws {
        fd = try UnixSocketConnector.connect(path)
        var value = timeval(tv_sec: Int(receiveTimeout), tv_usec: Int((receiveTimeout - Double(Int(receiveTimeout))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw TestFailure("send failed: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    /// The next line, or nil when the peer closed the connection.
    func readLine() throws -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return nil }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == ECONNRESET { return nil }
                throw TestFailure("recv failed: \(String(cString: strerror(errno)))")
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// Sends one line and parses the one-line reply.
    func exchange(_ line: String) throws -> Any? {
        try send(line + "\n")
        guard let reply = try readLine() else { throw TestFailure("connection closed instead of a reply to \(line)") }
        return try JSONSerialization.jsonObject(with: Data(reply.utf8), options: [.fragmentsAllowed])
    }

    func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }
}
