import BackendContract
import DispatchSimCore
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import HummingbirdWSCompression
import Logging
import NIOCore

/// How to run the reference backend (`dispatch-sim` flags).
public struct SimOptions: Sendable {
    public var host = "127.0.0.1"
    /// 0 picks a free port (the running server reports it).
    public var port = 8080
    public var scenario = Scenario.builtIn
    /// With a state file, the world is saved after each change and restored on start.
    public var stateFile: String?
    /// Where photos are kept; in memory without it.
    public var photoDirectory: String?
    public var accessTokenSeconds = 3600
    public var refreshTokenSeconds = 7 * 86400
    /// Seed of the fault injector's randomness.
    public var seed = UInt64.random(in: 0 ... .max)
    public var faults = FaultPlan.none
    public var admission = AdmissionLimits.unlimited
    /// The server's own WebSocket ping, seconds; nil: none (the unit keeps its connection alive, only when idle).
    public var webSocketPingSeconds: Double?
    /// A carrier NAT in front (`CarrierNAT`) that forgets a connection after this many idle seconds; nil: none.
    public var natIdleSeconds: Double?
    /// HTTPS with dispatch-sim as the fleet's CA (mutual TLS, enrolment); plain HTTP without it.
    public var tls: FleetCA.Settings?

    public init() {}
}

/// The reference backend: the contract of docs/backend-openapi.yaml over HTTP and WebSocket, plus /sim/.
public enum SimServer {
    /// Builds the application; `onRunning` gets the bound port.
    public static func makeApplication(
        _ options: SimOptions, logger: Logger, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> some ApplicationProtocol {
        var problems = options.scenario.problems() + options.faults.problems() + options.admission.problems()
        if let ping = options.webSocketPingSeconds, !(ping > 0) { problems.append("the WebSocket ping must be a positive number of seconds") }
        if let idle = options.natIdleSeconds, !(idle > 0) { problems.append("the NAT's idle timeout must be a positive number of seconds") }
        guard problems.isEmpty else { throw SimStartupError("unusable configuration: \(problems.joined(separator: "; "))") }
        let hub = WebSocketHub()
        let state = try SimState(
            scenario: options.scenario, stateFile: options.stateFile.map { URL(fileURLWithPath: $0) }, hub: hub, logger: logger)
        let tokens = TokenIssuer(
            secret: state.tokenKey, accessTTL: options.accessTokenSeconds, refreshTTL: options.refreshTokenSeconds)
        let faults = FaultInjector(plan: options.faults, seed: options.seed)
        let photos = try PhotoStore(directory: options.photoDirectory.map { URL(fileURLWithPath: $0) })

        let admission = AdmissionControl(limits: options.admission)
        let ca = try options.tls.map { try FleetCA($0) }
        let router = Router(context: SimContext.self)
        // Faults first: a request the refusal window drops never reached the admission desk.
        router.middlewares.add(FaultMiddleware(faults: faults))
        router.middlewares.add(AdmissionMiddleware(admission: admission))
        if let ca { router.middlewares.add(UnitCertificateMiddleware(ca: ca)) }
        EnrolmentRoutes(ca: ca).add(to: router)
        AuthRoutes(tokens: tokens, state: state).add(to: router)
        let rider = router.group("/api/v1/rider").add(middleware: BearerAuthMiddleware(tokens: tokens, state: state))
        RiderRoutes(state: state).add(to: rider)
        PODRoutes(state: state, photos: photos).add(to: rider)
        RiderWebSocket(state: state, hub: hub, faults: faults).add(to: rider)
        ReleaseRoutes(state: state).add(rider: rider, router: router)
        SimRoutes(state: state, faults: faults, admission: admission, hub: hub, photos: photos).add(to: router)
        FleetRoutes(state: state).add(to: router)

        let webSocketResponder = router.buildResponder()
        let http = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(additionalChannelHandlers: [RefuseConnectionsHandler(faults: faults, admission: admission)]),
            // permessage-deflate when the client offers it: location batches shrink several times.
            ws: .init(
                maxFrameSize: RiderWebSocket.maxMessageBytes,
                extensions: [.perMessageDeflate(maxDecompressedFrameSize: RiderWebSocket.maxMessageBytes)],
                autoPing: options.webSocketPingSeconds.map { .enabled(timePeriod: .milliseconds(Int64($0 * 1000))) } ?? .disabled))
        let gated = HTTPServerBuilder { responder in
            GatedUpgradeChannel(
                inner: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: http),
                faults: faults, admission: admission, ca: ca)
        }
        return Application(
            router: router,
            server: try ca.map { try .tls(gated, tlsConfiguration: $0.serverTLS()) } ?? gated,
            // Behind a carrier NAT the server listens on a loopback port of its own, and the NAT on the given address.
            configuration: .init(
                address: options.natIdleSeconds == nil ? .hostname(options.host, port: options.port) : .hostname("127.0.0.1", port: 0),
                serverName: "dispatch-sim"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? options.port
                guard let idle = options.natIdleSeconds else { return await onRunning(port) }
                do {
                    let natPort = try await CarrierNAT.start(
                        host: options.host, port: options.port, backendPort: port, idleTimeout: .milliseconds(Int64(idle * 1000)), logger: logger)
                    await onRunning(natPort)
                } catch {
                    logger.critical("the carrier NAT cannot listen on \(options.host):\(options.port): \(error)")
                }
            },
            logger: logger)
    }
}
