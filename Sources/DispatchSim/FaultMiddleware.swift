import BackendContract
import DispatchSimCore
import HTTPTypes
import Hummingbird
import NIOCore

/// Applies the fault plan to API requests: latency, a 5xx answer without handling, or a dropped connection
/// before or after handling (the "request lost" and "answer lost" cases a client must survive).
struct FaultMiddleware: RouterMiddleware {
    typealias Context = SimContext
    let faults: FaultInjector

    /// What the request cost on the wire, roughly: its HTTP/1.1 request line, header lines and body.
    static func wireBytes(_ request: Request) -> Int {
        wireBytes(
            method: request.method.rawValue, uri: request.uri.description,
            headers: request.headers.lazy.map { ($0.name.rawName, $0.value) }, body: request.headers[.contentLength].flatMap { Int($0) } ?? 0)
    }

    /// The same for a request as NIO's HTTP/1 decoder hands it over (a WebSocket's upgrade, judged before the router).
    static func wireBytes(method: String, uri: String, headers: some Sequence<(String, String)>, body: Int) -> Int {
        let line = method.utf8.count + uri.utf8.count + 12
        return line + headers.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 } + 2 + body
    }

    /// Thrown once the connection is closed on purpose; nothing more is sent.
    struct ConnectionDropped: Error {}

    /// The answer of an injected error: a 429 or 503 carries the plan's `Retry-After` and the server's `Date`.
    static func injected(_ status: Int, faults: FaultInjector) -> SimHTTPError {
        var error = SimHTTPError(.injectedFault, "fault injected by dispatch-sim")
        error.statusOverride = status
        if [429, 503].contains(status), let retryAfter = faults.plan.retryAfter {
            error.headers[.retryAfter] = retryAfter
            error.headers[.date] = RetryAfter.imfFixdate(Int(SimState.now()))
        }
        return error
    }

    func handle(_ request: Request, context: SimContext, next: (Request, SimContext) async throws -> Response) async throws -> Response {
        // A WebSocket upgrade was judged before the router (UpgradeGate).
        if UpgradeGate.isUpgrade(request.headers[.upgrade]) { return try await next(request, context) }
        // Kept-alive connections opened before the refusal window are cut too, as when a server goes away.
        if faults.isRefusing(now: SimState.now()) {
            context.channel.close(promise: nil)
            throw ConnectionDropped()
        }
        let (decision, latencyMs) = faults.decide(path: request.uri.path, bytes: Self.wireBytes(request))
        if latencyMs > 0 { try await Task.sleep(for: .milliseconds(latencyMs)) }
        switch decision {
        case .pass:
            return try await next(request, context)
        case .error(let status):
            throw Self.injected(status, faults: faults)
        case .dropBefore:
            context.logger.info("fault: connection dropped before handling", metadata: ["path": "\(request.uri.path)"])
            context.channel.close(promise: nil)
            throw ConnectionDropped()
        case .dropAfter:
            _ = try? await next(request, context)  // the fault: done, and its answer lost on purpose
            context.logger.info("fault: connection dropped after handling", metadata: ["path": "\(request.uri.path)"])
            context.channel.close(promise: nil)
            throw ConnectionDropped()
        }
    }
}

/// Closes each new connection at once while the fault injector refuses connections.
final class RefuseConnectionsHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    let faults: FaultInjector
    /// Counts each refused connection (`/sim/admission`).
    let admission: AdmissionControl

    init(faults: FaultInjector, admission: AdmissionControl) {
        self.faults = faults
        self.admission = admission
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { refuseIfAsked(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        refuseIfAsked(context)
        context.fireChannelActive()
    }

    private func refuseIfAsked(_ context: ChannelHandlerContext) {
        guard faults.isRefusing(now: SimState.now()) else { return }
        admission.refusedUnanswered()
        // Accepted and closed before a byte is read: the client's request fails as on a refused connection.
        context.close(promise: nil)
    }
}
