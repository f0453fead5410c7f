import ArgumentParser
import BackendClient
import Crypto
import DriverAPI
import DriverDomain
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import SwiftASN1
import TPMKit
import X509

/// The TLS handshake a unit pays per new connection to its backend: with its certificate and key from a file (mutual
/// TLS, as driverd presents it), the same with the server's certificate judged by driverd's `CertificateJudge` (as
/// while the unit's clock is untrusted) and, with `--tpm`, with the key in a TPM (which signs each handshake), beside
/// one without a client certificate, in the same run, in turn, over loopback to a server that asks for a client
/// certificate and verifies it against the fleet's CA (as dispatch-sim --tls-dir).
struct HandshakeBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tls-handshake", abstract: "TLS handshakes with and without the unit's certificate.")

    @Option(help: "Handshakes of each kind.") var count = 300
    @Option(help: "A TPM's TCTI (swtpm:host=127.0.0.1,port=2321, device:/dev/tpmrm0): also handshakes with the key in it.")
    var tpm: String?

    func run() throws {
        let pki = try TestPKI(tpm: try tpm.map { try TPM(tcti: $0) })
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let times = try measure(pki, on: group)
        try group.syncShutdownGracefully()
        try FileManager.default.removeItem(atPath: pki.caFile)
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        let base = median(times[0])
        say("TLS 1.3 handshakes over loopback, ECDSA P-256 everywhere, \(count) of each, in turn (median):")
        func padded(_ label: String) -> String { label + String(repeating: " ", count: max(0, 64 - label.count)) }
        say("  \(padded("without a client certificate (baseline)"))\(TextFormat.fixed(base * 1000, decimals: 2)) ms")
        let labels = [
            "with the unit's certificate, key file", "the same, server judged by CertificateJudge (untrusted clock)",
            "with the unit's certificate, key in the TPM",
        ]
        for (index, label) in labels.enumerated() where index + 1 < times.count {
            let median = median(times[index + 1])
            say("  \(padded(label))\(TextFormat.fixed(median * 1000, decimals: 2)) ms  (\(TextFormat.fixed(median / base, decimals: 2)) x)")
        }
    }

    /// Seconds of each handshake by kind (none, the file key, the file key with the server judged by `CertificateJudge`,
    /// the TPM key when there is one), after 10 of each for warm-up.
    func measure(_ pki: TestPKI, on group: MultiThreadedEventLoopGroup) throws -> [[Double]] {
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
        let presenting: [ClientIdentity?] = [nil, pki.units[0], pki.units[0]] + pki.units.dropFirst().map { $0 }
        let contexts = try presenting.map { try NIOSSLContext(configuration: pki.clientTLS(presenting: $0)) }
        let judge = try CertificateJudge(caFile: pki.caFile)
        var times = [[Double]](repeating: [], count: contexts.count)
        for index in 0..<(contexts.count * (count + 10)) {
            let kind = index % contexts.count
            let seconds = try Self.handshake(group: group, port: port, context: contexts[kind], judge: kind == 2 ? judge : nil)
            guard index >= 10 * contexts.count else { continue }  // warm-up
            times[kind].append(seconds)
        }
        try server.close().wait()
        // The server saw the unit's certificate on every mutual handshake (and none on the others).
        let mutual = (contexts.count - 1) * count
        guard presented.value >= mutual else { throw ValidationError("the server saw \(presented.value) client certificates in \(mutual) mutual handshakes") }
        return times
    }

    /// Connect, complete the handshake, close; seconds from the connect to the handshake's end.
    static func handshake(group: EventLoopGroup, port: Int, context: NIOSSLContext, judge: CertificateJudge?) throws -> Double {
        let done = group.next().makePromise(of: Void.self)
        let started = ContinuousClock.now
        let release = TrustedClock.earliestPlausible
        let channel = try ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let tls = try judge.map { judge in
                        try NIOSSLClientHandler(
                            context: context, serverHostname: nil,
                            customVerificationCallback: judge.callback(hostname: "127.0.0.1", time: { .atLeast(release) }) { refusal in
                                done.fail(refusal)
                            })
                    } ?? NIOSSLClientHandler(context: context, serverHostname: nil)
                    try channel.pipeline.syncOperations.addHandler(tls)
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
        /// The unit's identity with a key file, and with a key in the TPM when there is one.
        let units: [ClientIdentity]

        init(tpm: TPM?) throws {
            let now = Date()
            let caKey = P256.Signing.PrivateKey()
            let caName = try DistinguishedName { CommonName("bench CA") }
            let caCertificate = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey), notValidBefore: now - 3600, notValidAfter: now + 86400,
                issuer: caName, subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0)) }, issuerPrivateKey: .init(caKey))
            func issue(_ name: String, _ publicKey: Certificate.PublicKey, server: Bool) throws -> Certificate {
                try Certificate(
                    version: .v3, serialNumber: .init(), publicKey: publicKey, notValidBefore: now - 3600, notValidAfter: now + 86400,
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
            let server = try NIOSSLCertificate(
                bytes: Array(try issue("bench server", .init(serverKey.publicKey), server: true).serializeAsPEM().pemString.utf8), format: .pem)
            var tls = TLSConfiguration.makeServerConfiguration(
                certificateChain: [.certificate(server)], privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(serverKey.pemRepresentation.utf8), format: .pem)))
            tls.certificateVerification = .optionalVerification
            tls.trustRoots = .certificates([ca])
            serverTLS = tls
            var units = [
                try ClientIdentity(
                    certificateChainPEM: try issue("driverd-bench", .init(unitKey.publicKey), server: false).serializeAsPEM().pemString,
                    privateKeyPEM: unitKey.pemRepresentation)
            ]
            if let tpmKey = try tpm?.makeKey() {
                units.append(ClientIdentity(
                    certificateChainPEM: try issue("driverd-bench-tpm", tpmKey.publicKey, server: false).serializeAsPEM().pemString,
                    privateKey: tpmKey.tlsKey))
            }
            self.units = units
        }

        /// The client's TLS as driverd builds it (`BackendClient`), presenting `unit`'s certificate and key, or none.
        func clientTLS(presenting unit: ClientIdentity?) throws -> TLSConfiguration {
            try unit?.tlsConfiguration(caFile: caFile) ?? ClientIdentity.anonymousTLS(caFile: caFile)
        }
    }
}
