#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// While the system clock is not the time (`CertificateTime` other than `.system`), the HTTP client, which judges
/// the backend's certificate by the system clock with no hook to do otherwise, speaks plain HTTP over this Unix
/// socket (in the state directory: driverd's alone), and each of its connections goes on over TLS to the backend,
/// the certificate judged by `CertificateJudge` at the time that is known. One per identity the client presents.
final class CertificateTunnel: Sendable {
    let socketPath: String
    private let shared: Shared
    private let server: any Channel

    private final class Shared: Sendable {
        /// Why the latest connection failed, for the error of the request it carried (TLS itself says only "failed").
        let failure = Mutex<String?>(nil)
    }

    private init(socketPath: String, shared: Shared, server: any Channel) {
        self.socketPath = socketPath
        self.shared = shared
        self.server = server
    }

    /// `sslContext` is asked at each connection: the unit's identity may have changed since the last.
    static func open(
        socketPath: String, host: String, port: Int, sslContext: @escaping @Sendable () throws -> NIOSSLContext,
        judging: CertificateJudging
    ) async throws -> CertificateTunnel {
        let shared = Shared()
        let isAddress = CertificateJudge.isAddress(host)
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { inbound in
                let context: NIOSSLContext
                do {
                    context = try sslContext()
                } catch {
                    shared.failure.withLock { $0 = "the TLS configuration: \(error)" }
                    inbound.close(promise: nil)
                    return inbound.eventLoop.makeSucceededVoidFuture()
                }
                // Both ends on one event loop: the glue between them touches both pipelines without hopping. The accepted
                // channel is registered (and reads) only once this returns: the glue is in place by then.
                return ClientBootstrap(group: inbound.eventLoop)
                    .connectTimeout(.seconds(10))
                    .channelInitializer { outbound in
                        outbound.eventLoop.makeCompletedFuture {
                            let name = isAddress ? nil : host
                            // The clock trusted since the tunnel opened: TLS's own check again.
                            let tls = try judging.verification(hostname: host) { refusal in shared.failure.withLock { $0 = refusal.description } }
                                .map { try NIOSSLClientHandler(context: context, serverHostname: name, customVerificationCallback: $0) }
                                ?? NIOSSLClientHandler(context: context, serverHostname: name)
                            try outbound.pipeline.syncOperations.addHandler(tls)
                        }
                    }
                    .connect(host: host, port: port)
                    .flatMapThrowing { outbound in
                        let (toBackend, toClient) = GlueHandler.matchedPair()
                        try inbound.pipeline.syncOperations.addHandler(toBackend)
                        try outbound.pipeline.syncOperations.addHandler(toClient)
                    }
                    .flatMapErrorWithEventLoop { error, loop in
                        // The request on the other side fails as a network error, and goes again later.
                        shared.failure.withLock { $0 = $0 ?? "\(error)" }
                        inbound.close(promise: nil)
                        return loop.makeSucceededVoidFuture()
                    }
            }
            .bind(unixDomainSocketPath: socketPath, cleanupExistingSocketFile: true)
            .get()
        // Whoever connects speaks to the backend as this unit: driverd alone (the state directory is its own too).
        guard chmod(socketPath, 0o600) == 0 else {
            let reason = String(cString: strerror(errno))
            try await server.close()
            throw OpenFailure(description: "cannot make \(socketPath) driverd's alone: \(reason)")
        }
        return CertificateTunnel(socketPath: socketPath, shared: shared, server: server)
    }

    struct OpenFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// Why a connection through the tunnel last failed (the judge's refusal, a connect that failed), once.
    func takeFailure() -> String? { shared.failure.withLock { failure in defer { failure = nil }; return failure } }

    /// Stops taking connections and removes the socket file.
    func close() async {
        do {
            try await server.close()
        } catch {
            // Closed already: the same end.
        }
        unlink(socketPath)
    }
}

/// Passes bytes between two channels on one event loop, each read only while the other can take the write (the
/// glue of swift-nio-examples' connect proxy).
private final class GlueHandler: ChannelDuplexHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private var partner: GlueHandler?
    private var context: ChannelHandlerContext?
    private var pendingRead = false

    static func matchedPair() -> (GlueHandler, GlueHandler) {
        let first = GlueHandler()
        let second = GlueHandler()
        first.partner = second
        second.partner = first
        return (first, second)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    private func partnerWrite(_ data: NIOAny) { context?.write(data, promise: nil) }
    private func partnerFlush() { context?.flush() }
    private func partnerClose() { context?.close(promise: nil) }
    private var partnerWritable: Bool { context?.channel.isWritable ?? false }

    private func partnerBecameWritable() {
        guard pendingRead else { return }
        pendingRead = false
        context?.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { partner?.partnerWrite(data) }
    func channelReadComplete(context: ChannelHandlerContext) { partner?.partnerFlush() }
    func channelInactive(context: ChannelHandlerContext) { partner?.partnerClose() }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        partner?.partnerClose()
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { partner?.partnerBecameWritable() }
    }

    func read(context: ChannelHandlerContext) {
        if partner?.partnerWritable ?? false { context.read() } else { pendingRead = true }
    }
}
