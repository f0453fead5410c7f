import ArgumentParser
import BackendClient
import Crypto
import DriverAPI
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import SwiftASN1
import X509

/// The TLS handshake a unit pays per new connection to its backend: with its certificate and key from a file (mutual
/// TLS, as driverd presents it), beside one without a client certificate, in the same run, alternating, over loopback
/// to a server that asks for a client certificate and verifies it against the fleet's CA (as dispatch-sim --tls-dir).
struct HandshakeBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tls-handshake", abstract: "TLS handshakes with and without the unit's certificate.")

    @Option(help: "Handshakes of each kind.") var count = 300

    func run() throws {
        let pki = try TestPKI()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (plain, mutual) = try measure(pki, on: group)
        try group.syncShutdownGracefully()
        try FileManager.default.removeItem(atPath: pki.caFile)
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        let (base, file) = (median(plain), median(mutual))
        say("TLS 1.3 handshakes over loopback, ECDSA P-256 everywhere, \(count) of each, alternating (median):")
        say("  without a client certificate (baseline)   \(TextFormat.fixed(base * 1000, decimals: 2)) ms")
        say("  with the unit's certificate, key file      \(TextFormat.fixed(file * 1000, decimals: 2)) ms  (\(TextFormat.fixed(file / base, decimals: 2)) x)")
    }

    /// Seconds of each handshake without and with the unit's certificate, after 20 of warm-up.
    func measure(_ pki: TestPKI, on group: MultiThreadedEventLoopGroup) throws -> (plain: [Double], mutual: [Double]) {
        let serverContext = try NIOSSLContext(configuration: pki.serverTLS)
        let presented = PeerCount()
        let server = try ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let tls = NIOSSLServerHandler(context: serverContext)
                    try channel.pipeline.syncOperations.addHandler(tls)
                    try channel.pipeline.syncOperations.addHandler(PeerWatch(tls: tls, count: presented))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        let port = server.localAddress!.port!
        let plain = try NIOSSLContext(configuration: pki.clientTLS(presenting: false))
        let mutual = try NIOSSLContext(configuration: pki.clientTLS(presenting: true))
        var times: (plain: [Double], mutual: [Double]) = ([], [])
        for index in 0..<(2 * count + 20) {
            let presenting = index % 2 == 1
            let seconds = try Self.handshake(group: group, port: port, context: presenting ? mutual : plain)
            guard index >= 20 else { continue }  // warm-up
            if presenting { times.mutual.append(seconds) } else { times.plain.append(seconds) }
        }
        try server.close().wait()
        // The server saw the unit's certificate on every mutual handshake (and none on the others).
        guard presented.value >= count else { throw ValidationError("the server saw \(presented.value) client certificates in \(count) mutual handshakes") }
        return times
    }

    /// Connect, complete the handshake, close; seconds from the connect to the handshake's end.
    static func handshake(group: EventLoopGroup, port: Int, context: NIOSSLContext) throws -> Double {
        let done = group.next().makePromise(of: Void.self)
        let started = ContinuousClock.now
        let channel = try ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: context, serverHostname: nil))
                    try channel.pipeline.syncOperations.addHandler(HandshakeWatch(done: done))
                }
            }
            .connect(host: "127.0.0.1", port: port).wait()
        try done.futureResult.wait()
        let elapsed = ContinuousClock.now - started
        try channel.close().wait()
        let (seconds, attoseconds) = elapsed.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    final class PeerCount: @unchecked Sendable {
        // Touched on the server's one event loop only.
        var value = 0
    }

    /// Counts the handshakes in which the server got a client certificate.
    final class PeerWatch: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let tls: NIOSSLServerHandler
        let count: PeerCount
        init(tls: NIOSSLServerHandler, count: PeerCount) {
            self.tls = tls
            self.count = count
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let event = event as? TLSUserEvent, case .handshakeCompleted = event, tls.peerCertificate != nil { count.value += 1 }
            context.fireUserInboundEventTriggered(event)
        }
    }

    final class HandshakeWatch: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let done: EventLoopPromise<Void>
        init(done: EventLoopPromise<Void>) { self.done = done }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let event = event as? TLSUserEvent, case .handshakeCompleted = event { done.succeed(()) }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: Error) { done.fail(error) }
    }

    /// A CA, a server certificate for 127.0.0.1 and a unit's certificate, made in memory for the run.
    struct TestPKI {
        /// The CA's certificate in a file, as `backend.ca_file` names it on a unit.
        let caFile: String
        let serverTLS: TLSConfiguration
        let unit: ClientIdentity

        init() throws {
            let now = Date()
            let caKey = P256.Signing.PrivateKey()
            let caName = try DistinguishedName { CommonName("bench CA") }
            let caCertificate = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey), notValidBefore: now - 3600, notValidAfter: now + 86400,
                issuer: caName, subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0)) }, issuerPrivateKey: .init(caKey))
            func issue(_ name: String, _ key: P256.Signing.PrivateKey, server: Bool) throws -> Certificate {
                try Certificate(
                    version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey), notValidBefore: now - 3600, notValidAfter: now + 86400,
                    issuer: caName, subject: try DistinguishedName { CommonName(name) }, signatureAlgorithm: .ecdsaWithSHA256,
                    extensions: try Certificate.Extensions {
                        Critical(BasicConstraints.notCertificateAuthority)
                        try ExtendedKeyUsage([server ? .serverAuth : .clientAuth])
                        if server { SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))]) }
                    },
                    issuerPrivateKey: .init(caKey))
            }
            let serverKey = P256.Signing.PrivateKey(), unitKey = P256.Signing.PrivateKey()
            let caPEM = try caCertificate.serializeAsPEM().pemString
            caFile = FileManager.default.temporaryDirectory.appendingPathComponent("driverd-bench-ca-\(getpid()).pem").path
            try Data(caPEM.utf8).write(to: URL(fileURLWithPath: caFile))
            let ca = try NIOSSLCertificate(bytes: Array(caPEM.utf8), format: .pem)
            let server = try NIOSSLCertificate(bytes: Array(try issue("bench server", serverKey, server: true).serializeAsPEM().pemString.utf8), format: .pem)
            var tls = TLSConfiguration.makeServerConfiguration(
                certificateChain: [.certificate(server)], privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(serverKey.pemRepresentation.utf8), format: .pem)))
            tls.certificateVerification = .optionalVerification
            tls.trustRoots = .certificates([ca])
            serverTLS = tls
            unit = try ClientIdentity(
                certificateChainPEM: try issue("driverd-bench", unitKey, server: false).serializeAsPEM().pemString, privateKeyPEM: unitKey.pemRepresentation)
        }

        /// The client's TLS as driverd builds it (`BackendClient`); `presenting`: the unit's certificate and key.
        func clientTLS(presenting: Bool) throws -> TLSConfiguration {
            presenting ? try unit.tlsConfiguration(caFile: caFile) : ClientIdentity.anonymousTLS(caFile: caFile)
        }
    }
}
