import NIOSSL

/// The unit's certificate chain and private key (PEM), which every connection to the backend presents once the unit
/// is enrolled (mutual TLS); the backend's own certificate is still checked against `backend.ca_file` or the system.
public struct ClientIdentity: Sendable, Equatable {
    public var certificateChainPEM: String
    /// From a PEM file, or a key a TPM holds (NIOSSL's custom key).
    public var privateKey: NIOSSLPrivateKey

    public init(certificateChainPEM: String, privateKey: NIOSSLPrivateKey) {
        self.certificateChainPEM = certificateChainPEM
        self.privateKey = privateKey
    }

    public init(certificateChainPEM: String, privateKeyPEM: String) throws {
        self.init(certificateChainPEM: certificateChainPEM, privateKey: try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem))
    }

    /// The backend's clients' TLS (HTTPS and the WebSocket): the backend verified against `caFile`, or the system's
    /// roots; no certificate of the unit's.
    public static func anonymousTLS(caFile: String?) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile { tls.trustRoots = .file(caFile) }
        return tls
    }

    /// The same, presenting this identity.
    public func tlsConfiguration(caFile: String?) throws -> TLSConfiguration {
        var tls = Self.anonymousTLS(caFile: caFile)
        tls.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(certificateChainPEM.utf8)).map { .certificate($0) }
        tls.privateKey = .privateKey(privateKey)
        return tls
    }
}
