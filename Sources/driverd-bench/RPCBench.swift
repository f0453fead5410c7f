import ArgumentParser
import Foundation
import JSONRPC

/// Round-trip latency of `agent.status` through the real daemon, beside a raw line echo on the same kind of
/// socket, with 1 and 50 concurrent clients.
struct RPCBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rpc", abstract: "RPC round trip against a raw echo.")

    @Option(help: "Directory with the driverd and driverd-bench binaries.") var bin: String
    @Option(help: "Requests per client per round.") var requests = 2000
    @Option(help: "Concurrency levels.") var clients: [Int] = [1, 50]
    @Option(help: "Rounds; the median round is reported.") var rounds = 5

    func run() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }  // a scratch directory: one left behind harms no figure
        let daemonSocket = directory + "/driverd.sock"
        let echoSocket = directory + "/echo.sock"
        let daemon = try spawn(bin + "/driverd", [
            "--socket", daemonSocket, "--state-dir", directory + "/state", "--config", directory + "/none.toml",
            "--log-level", "warning", "--log-target", "stderr",
        ])
        let echo = try spawn(bin + "/driverd-bench", ["echo-server", "--socket", echoSocket])
        defer {
            for process in [daemon, echo] {
                process.terminate()
                process.waitUntilExit()
            }
        }
        try waitForSocket(daemonSocket)
        try waitForSocket(echoSocket)

        say("RPC round trip: agent.status through driverd vs a raw NIO line echo (baseline), same run")
        say("\(requests) requests per client per round, median of \(rounds) rounds; latencies in microseconds")
        say(pad("clients", 8) + pad("target", 14) + pad("p50", 9) + pad("p99", 9) + pad("req/s", 10) + "p50 ratio")
        for concurrency in clients {
            var results: [String: [Measurement]] = [:]
            // Alternate the targets round by round, so drift on a noisy machine hits both alike.
            for _ in 0..<rounds {
                for (name, socket) in [("echo", echoSocket), ("driverd", daemonSocket)] {
                    results[name, default: []].append(try measure(socket: socket, clients: concurrency))
                }
            }
            let echoMedian = Measurement.median(results["echo"]!)
            let daemonMedian = Measurement.median(results["driverd"]!)
            for (name, measurement) in [("raw echo", echoMedian), ("agent.status", daemonMedian)] {
                let ratio = name == "raw echo" ? "1.00" : String(format: "%.2f", measurement.p50 / echoMedian.p50)
                say(pad("\(concurrency)", 8) + pad(name, 14) + pad(String(format: "%.0f", measurement.p50), 9)
                    + pad(String(format: "%.0f", measurement.p99), 9) + pad(String(format: "%.0f", measurement.throughput), 10) + ratio)
            }
        }
    }

    struct Measurement {
        var p50: Double
        var p99: Double
        var throughput: Double

        static func median(_ all: [Measurement]) -> Measurement {
            func mid(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
            return Measurement(p50: mid(all.map(\.p50)), p99: mid(all.map(\.p99)), throughput: mid(all.map(\.throughput)))
        }
    }

    private func measure(socket: String, clients: Int) throws -> Measurement {
        let line = Array(#"{"jsonrpc":"2.0","method":"agent.status","id":1}"#.utf8)
        let connections = try (0..<clients).map { _ in try RPCClient(socketPath: socket, timeout: .seconds(30)) }
        let latencies = LatencyCollector(clients: clients)
        let start = DispatchTime.now().uptimeNanoseconds
        let done = DispatchGroup()
        for (index, connection) in connections.enumerated() {
            done.enter()
            let box = ClientBox(connection)
            let thread = Thread { [requests] in
                var samples = [Double]()
                samples.reserveCapacity(requests)
                for _ in 0..<requests {
                    let before = DispatchTime.now().uptimeNanoseconds
                    try! box.client.writeLine(line)
                    _ = try! box.client.readLine()
                    samples.append(Double(DispatchTime.now().uptimeNanoseconds - before) / 1000)
                }
                latencies.store(samples, at: index)
                done.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        done.wait()
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let all = latencies.all.sorted()
        return Measurement(
            p50: all[all.count / 2], p99: all[min(all.count - 1, all.count * 99 / 100)],
            throughput: Double(all.count) / elapsed)
    }

    private func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(1, width - text.count)) }
}

/// Per-client sample arrays, each written by one thread.
final class LatencyCollector: @unchecked Sendable {
    private var samples: [[Double]]
    private let lock = NSLock()

    init(clients: Int) { samples = Array(repeating: [], count: clients) }

    func store(_ values: [Double], at index: Int) { lock.withLock { samples[index] = values } }

    var all: [Double] { lock.withLock { samples.flatMap { $0 } } }
}

/// A client used by exactly one thread.
final class ClientBox: @unchecked Sendable {
    let client: RPCClient
    init(_ client: RPCClient) { self.client = client }
}

func makeTemporaryDirectory() throws -> String {
    var template = Array("/tmp/driverd-bench-XXXXXX".utf8CString)
    guard let path = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw ValidationError("cannot create a temporary directory")
    }
    return String(cString: path)
}

/// `quiet`: its output goes nowhere, or its standard error to `log` (created) when one is named.
func spawn(_ path: String, _ arguments: [String], environment: [String: String] = [:], quiet: Bool = false, log: String? = nil) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    if quiet {
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        if let log {
            guard FileManager.default.createFile(atPath: log, contents: nil), let file = FileHandle(forWritingAtPath: log) else {
                throw ValidationError("cannot create \(log)")
            }
            process.standardError = file
        }
    }
    try process.run()
    return process
}

func waitForSocket(_ path: String) throws {
    for _ in 0..<500 {
        if case .live = UnixSocketConnector.probe(path) { return }
        usleep(20_000)
    }
    throw ValidationError("nothing listens on \(path)")
}
