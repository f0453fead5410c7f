import NIOSSL

/// The unit's certificate chain and private key (PEM), which every connection to the backend presents once the unit
/// is enrolled (mutual TLS); the backend's own certificate is still checked against `backend.ca_file` or the system.
public struct ClientIdentity: Sendable, Equatable {
    public var certificateChainPEM: String
    public var privateKeyPEM: String

    public init(certificateChainPEM: String, privateKeyPEM: String) {
        self.certificateChainPEM = certificateChainPEM
        self.privateKeyPEM = privateKeyPEM
    }

    func tlsConfiguration(caFile: String?) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile { tls.trustRoots = .file(caFile) }
        tls.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(certificateChainPEM.utf8)).map { .certificate($0) }
        tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem))
        return tls
    }
}
