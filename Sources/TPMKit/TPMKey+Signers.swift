import Crypto
import FoundationEssentials
import NIOCore
import NIOPosix
import NIOSSL
import SwiftASN1
import X509

extension TPMKey {
    /// The key as NIOSSL presents it in a TLS handshake.
    public var tlsKey: NIOSSLPrivateKey { NIOSSLPrivateKey(customPrivateKey: TLSSigner(key: self)) }

    /// The key as swift-certificates signs a certificate request with it.
    public var certificateKey: Certificate.PrivateKey { Certificate.PrivateKey(CertificateSigner(key: self)) }
}

/// BoringSSL hands the handshake's message; the TPM signs its SHA-256 digest, off the event loop (a hardware TPM
/// takes tens of milliseconds to sign).
struct TLSSigner: NIOSSLCustomPrivateKey, Hashable {
    let key: TPMKey

    var signatureAlgorithms: [SignatureAlgorithm] { [.ecdsaSecp256R1Sha256] }
    var derBytes: [UInt8] { key.blob }

    func sign(channel: any Channel, algorithm: SignatureAlgorithm, data: ByteBuffer) -> EventLoopFuture<ByteBuffer> {
        guard algorithm == .ecdsaSecp256R1Sha256 else {
            return channel.eventLoop.makeFailedFuture(TPM.Failure(description: "the TPM's key signs ECDSA P-256 with SHA-256 only, not \(algorithm)"))
        }
        let key = self.key
        return NIOThreadPool.singleton.runIfActive(eventLoop: channel.eventLoop) {
            ByteBuffer(bytes: try key.signature(for: Array(data.readableBytesView)).derRepresentation)
        }
    }

    func decrypt(channel: any Channel, data: ByteBuffer) -> EventLoopFuture<ByteBuffer> {
        channel.eventLoop.makeFailedFuture(TPM.Failure(description: "the TPM's key is for signing only"))
    }
}

/// swift-certificates' view of the key: it signs a CSR (and could sign anything the unit must prove it holds).
struct CertificateSigner: CustomPrivateKey {
    let key: TPMKey

    var publicKey: Certificate.PublicKey { key.publicKey }
    var defaultSignatureAlgorithm: Certificate.SignatureAlgorithm { .ecdsaWithSHA256 }
    var supportedSignatureAlgorithms: [Certificate.SignatureAlgorithm] { [.ecdsaWithSHA256] }

    func signSynchronously(bytes: some DataProtocol, signatureAlgorithm: Certificate.SignatureAlgorithm) throws -> Certificate.Signature {
        guard signatureAlgorithm == .ecdsaWithSHA256 else {
            throw TPM.Failure(description: "the TPM's key signs ECDSA P-256 with SHA-256 only, not \(signatureAlgorithm)")
        }
        let signature = try key.signature(for: bytes)
        return try Certificate.Signature(signatureAlgorithm: .ecdsaWithSHA256, signatureBytes: ASN1BitString(bytes: ArraySlice(signature.derRepresentation)))
    }

    static var defaultPEMDiscriminator: String { "TPM KEY" }

    /// The private part never leaves the TPM: there is nothing to write.
    func serialize(into coder: inout DER.Serializer) throws {
        throw TPM.Failure(description: "a key the TPM holds cannot be serialised")
    }
}
