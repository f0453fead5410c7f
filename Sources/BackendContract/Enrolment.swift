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

public struct EnrolmentResponse: Codable, Sendable, Equatable {
    /// PEM certificates, the unit's first, then the issuers up to (not including) the fleet's root.
    public var certificateChain: String

    public init(certificateChain: String) { self.certificateChain = certificateChain }
}
