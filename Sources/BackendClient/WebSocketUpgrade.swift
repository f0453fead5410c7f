import BackendContract
import FoundationEssentials
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import NIOWebSocket
import WSClient
// swift-websocket's frame handling (pings, close handshake, permessage-deflate) behind its own client; its client
// drops a refused upgrade's answer, and a backend's 429 or 503 with `Retry-After` on the upgrade must be heard.
// Pinned to the one version the mirror has (Package.swift): an SPI may change in any release.
@_spi(WSInternal) import WSCore

/// The WebSocket's opening handshake as swift-websocket's client makes it (same upgrader, same pipeline, same
/// frame handler), except that an answer other than 101 is kept: a refused upgrade throws `BackendClientError`
/// with the status and the backend's `Retry-After`, as a refused request does.
struct WebSocketUpgrade: ClientConnectionChannel {
    enum UpgradeResult {
        /// `catchUpStarted`: the backend started the push catch-up the upgrade asked for (no `hello` needed).
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, [any WebSocketExtension], catchUpStarted: Bool)
        /// The answer's head arrives after the upgrade handler gives up (it passes what it held on afterwards).
        case refused(EventLoopFuture<HTTPResponseHead>)
    }

    struct Context: WebSocketContext {
        let logger: Logger
        /// The backend answered the upgrade's `lastPushId` with `Push-Catch-Up`: its catch-up is under way.
        let catchUpStarted: Bool
    }

    typealias Value = EventLoopFuture<UpgradeResult>

    let host: String
    let path: String
    let configuration: WebSocketClientConfiguration
    let sslContext: NIOSSLContext?
    /// How the backend's certificate is judged (nil: by TLS on the system clock).
    let judging: CertificateJudging?
    let handler: WebSocketDataHandler<Context>

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let upgrader = NIOTypedWebSocketClientUpgrader<UpgradeResult>(
                maxFrameSize: configuration.maxFrameSize,
                upgradePipelineHandler: { [configuration] channel, head in
                    channel.eventLoop.makeCompletedFuture {
                        let asyncChannel = try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel)
                        let fields = HTTPFields(head.headers.compactMap { header in HTTPField.Name(header.name).map { HTTPField(name: $0, value: header.value) } })
                        let extensions = try configuration.extensions.buildClientExtensions(from: fields)
                        let catchUpStarted = head.headers.first(name: BackendPaths.pushCatchUpHeader) != nil
                        return UpgradeResult.websocket(asyncChannel, extensions, catchUpStarted: catchUpStarted)
                    }
                })
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: host)
            for field in configuration.additionalHeaders { headers.add(name: field.name.rawName, value: field.value) }
            for builder in configuration.extensions where !builder.clientRequestHeader().isEmpty {
                headers.add(name: "Sec-WebSocket-Extensions", value: builder.clientRequestHeader())
            }
            let upgrade = NIOTypedHTTPClientUpgradeConfiguration(
                upgradeRequestHead: HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers),
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let catcher = RefusalCatcher(promise: channel.eventLoop.makePromise())
                        try channel.pipeline.syncOperations.addHandler(catcher)
                        return UpgradeResult.refused(catcher.promise.futureResult)
                    }
                })
            var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: upgrade)
            pipeline.leftOverBytesStrategy = .forwardBytes
            if let sslContext {
                // An IP address is no name to send (SNI); the certificate is then checked against the address itself.
                let hostname = host.split(separator: ":").first.map(String.init) ?? host
                let name = CertificateJudge.isAddress(hostname) ? nil : hostname
                let tls = try judging?.verification(hostname: hostname) { refusal in logger.warning("the WebSocket: \(refusal)") }
                    .map { try NIOSSLClientHandler(context: sslContext, serverHostname: name, customVerificationCallback: $0) }
                    ?? NIOSSLClientHandler(context: sslContext, serverHostname: name)
                try channel.pipeline.syncOperations.addHandler(tls, position: .first)
            }
            return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
        }
    }

    func handle(value: Value, logger: Logger) async throws {
        switch try await value.get() {
        case .websocket(let channel, let extensions, let catchUpStarted):
            try await WebSocketHandler.handle(
                type: .client,
                configuration: .init(
                    extensions: extensions, autoPing: configuration.autoPing, closeTimeout: configuration.closeTimeout,
                    validateUTF8: configuration.validateUTF8, ignoreUncleanSSLShutdownErrors: configuration.ignoreUncleanSSLShutdownErrors,
                    maxFrameSize: configuration.maxFrameSize),
                asyncChannel: channel, context: Context(logger: logger, catchUpStarted: catchUpStarted), handler: handler)
        case .refused(let answer):
            let head = try await answer.get()
            let status = Int(head.status.code)
            throw BackendClientError(
                status: status, rawBody: "", body: nil,
                retryAfter: [429, 503].contains(status)
                    ? RetryAfter.seconds(head.headers.first(name: "Retry-After"), responseDate: head.headers.first(name: "Date")) : nil)
        }
    }
}

/// Takes the refused upgrade's answer head, then closes the connection (its body is not needed).
private final class RefusalCatcher: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPClientResponsePart
    let promise: EventLoopPromise<HTTPResponseHead>

    init(promise: EventLoopPromise<HTTPResponseHead>) { self.promise = promise }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            promise.succeed(head)
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(BackendClientError(transportReason: "the WebSocket upgrade was refused and its answer cut short"))
        context.fireChannelInactive()
    }
}
