/// A unit's enrolment (`POST /api/v1/units/enrol`): the fleet's claim token and a PKCS#10 request for the key the
/// unit made and keeps; the backend answers with the unit's certificate chain, which every later request and the
/// WebSocket present (mutual TLS).
public struct EnrolmentRequest: Codable, Sendable, Equatable {
    public var claimToken: String
    /// PEM (`CERTIFICATE REQUEST`), signed by the unit's key.
    public var csr: String

    public init(claimToken: String, csr: String) {
        self.claimToken = claimToken
        self.csr = csr
    }
}

/// A unit's renewal (`POST /api/v1/units/renew`, open without a client certificate like the enrolment, so that a unit
/// whose certificate expired while it was away still renews): its current certificate and a CSR signed by the same
/// key, which proves the unit still holds it.
public struct RenewalRequest: Codable, Sendable, Equatable {
    /// PEM, the unit's certificate first.
    public var certificate: String
    /// For the certificate's key and subject; or, rotating, for a new key and the same subject.
    public var csr: String
    /// Only when the CSR is for a new key (the backend asked for one: `KEY_ROTATION_REQUIRED`): the CSR's DER signed
    /// by the key the certificate names (ECDSA P-256, SHA-256, DER, base64), so the holder of the old key asks.
    public var previousKeySignature: String?

    public init(certificate: String, csr: String, previousKeySignature: String? = nil) {
        self.certificate = certificate
        self.csr = csr
        self.previousKeySignature = previousKeySignature
    }
}

/// The answer to an enrolment or a renewal.
public struct IssuedCertificate: Codable, Sendable, Equatable {
    /// PEM certificates, the unit's first, then the issuers up to (not including) the fleet's root.
    public var certificateChain: String

    public init(certificateChain: String) { self.certificateChain = certificateChain }
}
