import BackendContract
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

/// The fault plan, the admission desk and (over HTTPS) the unit's certificate judge a rider WebSocket's upgrade here, between the HTTP decoder and the
/// upgrade handler: Hummingbird answers every upgrade its router declines with a bare 400, where a fleet's load
/// balancer answers 429 or 503 with `Retry-After` as it does a request (a unit must hear the same "not now" on
/// either). The router's fault and admission middlewares pass upgrades through, so each is judged once.
final class UpgradeGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let faults: FaultInjector
    let admission: AdmissionControl
    let ca: FleetCA?
    /// false once the gate refused the connection's request; true when it let it through or saw none.
    let passed: EventLoopPromise<Bool>
    /// The rest of a refused request is dropped (its connection is closing).
    private var refused = false

    init(faults: FaultInjector, admission: AdmissionControl, ca: FleetCA?, passed: EventLoopPromise<Bool>) {
        self.faults = faults
        self.admission = admission
        self.ca = ca
        self.passed = passed
    }

    static func isUpgrade(_ value: String?) -> Bool { value?.lowercased() == "websocket" }

    /// Only a connection's first request can be an upgrade (Hummingbird's upgrade handler leaves after it): the gate
    /// judges that one and leaves too, before an upgraded connection's frames could reach it.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if let refusal = judge(head, channel: context.channel) {
                refused = true
                passed.succeed(false)
                if let refusal { answer(refusal, context: context) } else { context.close(promise: nil) }
                return
            }
            passed.succeed(true)
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        case .body, .end:
            if !refused { context.fireChannelRead(data) }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) { passed.succeed(true) }

    func channelInactive(context: ChannelHandlerContext) {
        passed.succeed(true)
        context.fireChannelInactive()
    }

    /// nil: let it through; `.some(nil)`: close without an answer; `.some(refusal)`: answer it.
    private func judge(_ head: HTTPRequestHead, channel: any Channel) -> SimHTTPError?? {
        let path = String(head.uri.prefix { $0 != "?" })
        guard path.hasPrefix("/api/"), Self.isUpgrade(head.headers.first(name: "Upgrade")) else { return nil }
        if faults.isRefusing(now: SimState.now()) { return .some(nil) }
        if let refusal = UnitCertificateCheck.refusal(path: path, channel: channel, ca: ca) { return refusal }
        let wire = FaultMiddleware.wireBytes(method: head.method.rawValue, uri: head.uri, headers: head.headers.lazy.map { ($0.name, $0.value) }, body: 0)
        switch faults.decide(path: path, bytes: wire).decision {
        case .error(let status): return FaultMiddleware.injected(status, faults: faults)
        case .dropBefore: return .some(nil)
        case .pass, .dropAfter: return AdmissionMiddleware.refusal(admission.admit(on: channel)).map { .some($0) }
        }
    }

    /// Writes the refusal as the router would have, then closes: the client's next try is a new connection.
    private func answer(_ refusal: SimHTTPError, context: ChannelHandlerContext) {
        let body: ByteBuffer
        do {
            body = ByteBuffer(bytes: try SimJSON.encoder.encode(BackendErrorBody(refusal.detail)))
        } catch {
            context.close(promise: nil)
            return
        }
        var headers = HTTPHeaders()
        for field in refusal.headers { headers.add(name: field.name.rawName, value: field.value) }
        headers.replaceOrAdd(name: "Content-Type", value: "application/json")
        headers.replaceOrAdd(name: "Content-Length", value: "\(body.readableBytes)")
        headers.replaceOrAdd(name: "Connection", value: "close")
        let head = HTTPResponseHead(version: .http1_1, status: .init(statusCode: Int(refusal.status.code)), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
    }
}

/// Hummingbird's HTTP/1 server with WebSocket upgrades, with the `UpgradeGate` placed after its HTTP decoder. A
/// connection the gate refused is not handed to Hummingbird, which would log its unfinished upgrade as an error.
struct GatedUpgradeChannel<Inner: ServerChildChannel>: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let inner: Inner.Value
        let passed: EventLoopFuture<Bool>
        var channel: any Channel { inner.channel }
    }

    let inner: Inner
    let faults: FaultInjector
    let admission: AdmissionControl
    let ca: FleetCA?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            let passed = channel.eventLoop.makePromise(of: Bool.self)
            try pipeline.addHandler(UpgradeGate(faults: faults, admission: admission, ca: ca, passed: passed), position: .after(decoder))
            return Value(inner: value, passed: passed.futureResult)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            guard try await value.passed.get() else { return }
        } catch {
            // The gate only ever succeeds the promise; were it failed, Hummingbird handles the connection as before.
            logger.error("the upgrade gate's verdict failed: \(error)")
        }
        await inner.handle(value: value.inner, logger: logger)
    }
}
