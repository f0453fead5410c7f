import ArgumentParser
import DispatchSim
import DispatchSimCore
import Foundation
import Hummingbird
import Logging
import RuntimeMetadata

/// The reference backend of driverd's backend contract, for tests, the demo, benchmarks and integrators.
@main
struct DispatchSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dispatch-sim",
        abstract: "The reference logistics backend for driverd (docs/backend-openapi.yaml, docs/dispatch-sim.md).")

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on; 0 picks a free one (printed on the first line of standard output).") var port = 8080
    @Option(help: "Scenario JSON file (drivers, tasks, stops, OTPs); the built-in Regensburg world without it.")
    var scenario: String?
    @Option(help: "Keep the world in this JSON file across restarts.") var state: String?
    @Option(help: "Store photo proofs in this directory (in memory without it).") var photoDir: String?
    @Option(help: "Access token lifetime, seconds.") var tokenTtl = 3600
    @Option(help: "Refresh token lifetime, seconds.") var refreshTtl = 7 * 86400
    @Option(help: "Seed for fault injection's randomness.") var seed: UInt64?
    @Option(help: "Fraction of API requests dropped before handling (0 to 1).") var faultDropBefore = 0.0
    @Option(help: "Fraction of API requests handled, then dropped without an answer.") var faultDropAfter = 0.0
    @Option(help: "Fraction of API requests answered 503 without handling.") var faultError = 0.0
    @Option(help: "Latency added to each API request, milliseconds.") var faultLatencyMs = 0
    @Option(help: "New connections taken a second; the rest are answered 429 with Retry-After (no limit without it).") var admitConnections: Double?
    @Option(help: "API requests taken a second; the rest are answered 429 with Retry-After (no limit without it).") var admitRequests: Double?
    @Option(help: "Ping each WebSocket this often, seconds (none without it: units keep their own connections alive).")
    var wsPingSeconds: Double?
    @Option(help: "Put a carrier NAT in front that forgets a connection idle this many seconds: later pushes are lost, the unit's next packet is reset.")
    var natIdleSeconds: Double?
    @Option(help: "Serve HTTPS as the fleet's CA: its test CA and server certificate are made (or read) in this directory (ca.pem for the units' backend.ca_file); every API request but the enrolment then needs a unit certificate.")
    var tlsDir: String?
    @Option(help: "A claim token units may enrol with (with --tls-dir).") var claimToken: String?
    @Option(help: "Enrolments the claim token allows.") var claimUses = 1000
    @Option(help: "Lifetime of a unit's certificate, seconds.") var unitCertSeconds = 30.0 * 86400
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel = "info"

    func run() async throws {
        // Before the server accepts: Swift's runtime can crash when two connections build this metadata at once.
        RuntimeMetadata.instantiateHTTPServerTypes()
        var options = SimOptions()
        options.host = host
        options.port = port
        if let scenario {
            do {
                options.scenario = try JSONDecoder().decode(Scenario.self, from: Data(contentsOf: URL(fileURLWithPath: scenario)))
            } catch {
                throw ValidationError("cannot load scenario \(scenario): \(error)")
            }
        }
        options.stateFile = state
        options.photoDirectory = photoDir
        options.accessTokenSeconds = tokenTtl
        options.refreshTokenSeconds = refreshTtl
        if let seed { options.seed = seed }
        options.webSocketPingSeconds = wsPingSeconds
        options.natIdleSeconds = natIdleSeconds
        options.admission = AdmissionLimits(connectionsPerSecond: admitConnections, requestsPerSecond: admitRequests)
        options.faults = FaultPlan(
            dropBeforeRate: faultDropBefore, dropAfterRate: faultDropAfter, errorRate: faultError, latencyMs: faultLatencyMs)
        if let tlsDir {
            options.tls = FleetCA.Settings(
                directory: tlsDir, claims: claimToken.map { [$0: claimUses] } ?? [:], unitCertificateSeconds: unitCertSeconds)
        }
        guard let level = Logger.Level(rawValue: logLevel) else { throw ValidationError("unknown log level \(logLevel)") }
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var logger = Logger(label: "dispatch-sim")
        logger.logLevel = level
        let base = (tlsDir == nil ? "http://" : "https://") + host
        let app = try await SimServer.makeApplication(options, logger: logger) { port in
            // Tests and scripts read this line to learn the port.
            let line = "dispatch-sim listening on \(base):\(port)\n"
            _ = line.withCString { write(1, $0, strlen($0)) }
        }
        try await app.runService()
    }
}
