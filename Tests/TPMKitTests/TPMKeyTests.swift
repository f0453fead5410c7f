import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import SwiftASN1
import Testing
import X509

@testable import TPMKit

/// swtpm, the software TPM 2.0 (Debian's `swtpm`), on two free loopback ports, its state in a fresh directory; stopped
/// when released.
final class SoftwareTPM {
    private(set) var process = Process()
    let state: String
    private(set) var port = 0
    var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    init() throws {
        state = NSTemporaryDirectory() + "swtpm-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        // tpm2-tss's swtpm TCTI finds the control channel on the next port. A port another test's connection left in
        // TIME_WAIT can refuse swtpm's bind: it exits, and another port is tried.
        for _ in 0..<5 {
            port = Self.freePort()
            guard port < 65535 else { continue }
            if try launch() { return }
        }
        throw TPM.Failure(description: "swtpm did not start on any of 5 ports")
    }

    /// Starts swtpm on `port` with the state directory; false if it did not come up.
    private func launch() throws -> Bool {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/swtpm")
        process.arguments = [
            "socket", "--tpm2", "--tpmstate", "dir=\(state)", "--server", "type=tcp,port=\(port),bindaddr=127.0.0.1",
            "--ctrl", "type=tcp,port=\(port + 1),bindaddr=127.0.0.1", "--flags", "not-need-init,startup-clear",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning, !(Self.listening(port) && Self.listening(port + 1)), ContinuousClock.now < deadline { usleep(20_000) }
        if process.isRunning, Self.listening(port) { return true }
        process.waitUntilExit()
        return false
    }

    /// Kills swtpm and starts it again on the same ports and state: a TPM reset (its loaded objects gone, its seeds
    /// kept), and every connection to it broken.
    func restart() throws {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if try launch() { return }
            usleep(200_000)
        }
        throw TPM.Failure(description: "swtpm did not start again on port \(port)")
    }

    deinit {
        // SIGKILL: swtpm may ignore SIGTERM while a client is connected, and its state is scratch.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: state)  // a scratch directory: nothing to report if it lingers
    }

    private static func withAddress<T>(_ port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    }

    static func listening(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        return withAddress(port) { connect(fd, $0, $1) } == 0
    }

    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        _ = withAddress(0) { bind(fd, $0, $1) }
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

@Suite("A key the TPM holds (swtpm)")
struct TPMKeyTests {
    @Test("a key made in the TPM signs what its public key verifies; its stored blob loads again, in a new connection, as the same key")
    func makesSignsAndLoads() throws {
        let simulator = try SoftwareTPM()
        let message = Array("a unit proves it holds its key".utf8)
        // swtpm serves one connection at a time (a kernel's /dev/tpmrm0 many): the first is let go (with its keys)
        // before the second.
        let (blob, publicKey) = try { () throws -> ([UInt8], Certificate.PublicKey) in
            let tpm = try TPM(tcti: simulator.tcti)
            let key = try tpm.makeKey()
            #expect(try tpm.makeKey().publicKey != key.publicKey, "a new key each time")
            let signature = try key.signature(for: message)
            let publicKey = try #require(P256.Signing.PublicKey(key.publicKey))
            #expect(publicKey.isValidSignature(signature, for: message))
            #expect(!publicKey.isValidSignature(signature, for: message + [0]))
            #expect(key.blob.count > 100 && key.blob.count < 1000)
            return (key.blob, key.publicKey)
        }()
        // More keys than the TPM has slots for (3 on many): each is unloaded when let go.
        for _ in 0..<5 { _ = try TPM(tcti: simulator.tcti).loadKey(blob) }
        let again = try TPM(tcti: simulator.tcti).loadKey(blob)
        #expect(again.publicKey == publicKey)
        #expect(try #require(P256.Signing.PublicKey(publicKey)).isValidSignature(try again.signature(for: message), for: message))
    }

    @Test("a blob that is not a key of this TPM is refused with tpm2-tss's reason; an absent TPM too")
    func refusals() throws {
        let simulator = try SoftwareTPM()
        let tpm = try TPM(tcti: simulator.tcti)
        let key = try tpm.makeKey()
        var damaged = key.blob
        damaged[damaged.count - 5] ^= 0xFF
        #expect { try tpm.loadKey(damaged) } throws: { ($0 as? TPM.Failure)?.description.hasPrefix("loading the unit's key into the TPM: ") == true }
        #expect(throws: TPM.Failure.self) { try tpm.loadKey([1, 2, 3]) }
        let another = try SoftwareTPM()
        #expect(throws: TPM.Failure.self, "another TPM cannot use it") { try TPM(tcti: another.tcti).loadKey(key.blob) }
        #expect { try TPM(tcti: "swtpm:host=127.0.0.1,port=\(SoftwareTPM.freePort())") } throws: {
            ($0 as? TPM.Failure)?.description.hasPrefix("opening the TPM at swtpm:") == true
        }
    }

    @Test("a key whose TPM lost it signs again: flushed behind its back, and after the TPM restarted (a reset: its loaded objects gone)")
    func outlivesAReset() throws {
        let simulator = try SoftwareTPM()
        let tpm = try TPM(tcti: simulator.tcti)
        let key = try tpm.makeKey()
        let publicKey = try #require(P256.Signing.PublicKey(key.publicKey))
        let message = Array("still the unit's key".utf8)

        let flushed = key.loaded.current
        try tpm.unload(flushed)
        #expect(publicKey.isValidSignature(try key.signature(for: message), for: message))
        #expect(key.loaded.current != flushed, "loaded again")

        try simulator.restart()
        #expect(publicKey.isValidSignature(try key.signature(for: message), for: message))
        #expect(publicKey.isValidSignature(try key.signature(for: message), for: message), "and it stays usable")
    }

    @Test("a certificate request signed in the TPM verifies against its key")
    func signsACertificateRequest() throws {
        let simulator = try SoftwareTPM()
        let key = try TPM(tcti: simulator.tcti).makeKey()
        let request = try CertificateSigningRequest(
            version: .v1, subject: try DistinguishedName { CommonName("driverd-tpm") }, privateKey: key.certificateKey,
            attributes: CertificateSigningRequest.Attributes(), signatureAlgorithm: .ecdsaWithSHA256)
        let parsed = try CertificateSigningRequest(pemEncoded: try request.serializeAsPEM().pemString)
        #expect(parsed.publicKey == key.publicKey)
        #expect(parsed.publicKey.isValidSignature(parsed.signature, for: parsed))
    }

    @Test("a TLS server that requires a client certificate accepts the one whose key the TPM holds, again after the TPM was reset")
    func mutualTLS() async throws {
        let simulator = try SoftwareTPM()
        let key = try TPM(tcti: simulator.tcti).makeKey()
        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName { CommonName("test CA") }
        let now = Date()
        let ca = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey), notValidBefore: now - 60, notValidAfter: now + 3600,
            issuer: caName, subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0)) }, issuerPrivateKey: .init(caKey))
        func issue(_ name: String, _ publicKey: Certificate.PublicKey, server: Bool) throws -> NIOSSLCertificate {
            let certificate = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: publicKey, notValidBefore: now - 60, notValidAfter: now + 3600, issuer: caName,
                subject: try DistinguishedName { CommonName(name) }, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    try ExtendedKeyUsage([server ? .serverAuth : .clientAuth])
                    if server { SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))]) }
                },
                issuerPrivateKey: .init(caKey))
            return try NIOSSLCertificate(bytes: try certificate.serializeAsPEM().pemString.utf8.map { $0 }, format: .pem)
        }
        let caCertificate = try NIOSSLCertificate(bytes: Array(try ca.serializeAsPEM().pemString.utf8), format: .pem)
        let serverKey = P256.Signing.PrivateKey()
        var serverTLS = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try issue("server", .init(serverKey.publicKey), server: true))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(serverKey.pemRepresentation.utf8), format: .pem)))
        serverTLS.certificateVerification = .noHostnameVerification  // a client certificate, required and verified
        serverTLS.trustRoots = .certificates([caCertificate])
        var clientTLS = TLSConfiguration.makeClientConfiguration()
        clientTLS.trustRoots = .certificates([caCertificate])
        clientTLS.certificateChain = [.certificate(try issue("driverd-tpm", key.publicKey, server: false))]
        clientTLS.privateKey = .privateKey(key.tlsKey)

        let serverContext = try NIOSSLContext(configuration: serverTLS)
        let peer = NIOLockedValueBox<String?>(nil)
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = NIOSSLServerHandler(context: serverContext)
                    try channel.pipeline.syncOperations.addHandler(handler)
                    try channel.pipeline.syncOperations.addHandler(PeerRecorder(peer: peer))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let clientContext = try NIOSSLContext(configuration: clientTLS)
        func handshake() async throws {
            peer.withLockedValue { $0 = nil }
            let client = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: clientContext, serverHostname: nil))
                    }
                }
                .connect(host: "127.0.0.1", port: server.localAddress!.port!).get()
            try await client.writeAndFlush(ByteBuffer(string: "hello")).get()
            let deadline = ContinuousClock.now + .seconds(10)
            while peer.withLockedValue({ $0 }) == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(peer.withLockedValue { $0 } == "CN=driverd-tpm")
            try await client.close()
        }
        try await handshake()
        // The TPM reset between two connections (its loaded key gone): the next handshake's signature loads it again.
        try simulator.restart()
        try await handshake()
        try await server.close()
    }
}

/// Records the subject of the client certificate once the first bytes arrive (the handshake is done by then).
final class PeerRecorder: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let peer: NIOLockedValueBox<String?>
    init(peer: NIOLockedValueBox<String?>) { self.peer = peer }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        peer.withLockedValue { $0 = "error: \(error)" }
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let certificate: NIOSSLCertificate?
        do {
            certificate = try context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self).peerCertificate
        } catch {
            peer.withLockedValue { $0 = "no TLS handler: \(error)" }
            return
        }
        let subject: String
        do {
            subject = try certificate.map { "\(try Certificate(derEncoded: try $0.toDERBytes()).subject)" } ?? "none"
        } catch {
            subject = "unreadable: \(error)"
        }
        peer.withLockedValue { $0 = subject }
    }
}
