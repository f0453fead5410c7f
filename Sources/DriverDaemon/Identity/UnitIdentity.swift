import BackendClient
import BackendContract
import Crypto
import DriverAPI
import DriverStore
import FoundationEssentials
import Logging
import Synchronization
import SwiftASN1
import X509

/// The unit's own identity towards the backend: an ECDSA P-256 key made on the unit at its first start, which never
/// leaves it (a 0600 file in the state directory, written durably), and the certificate the fleet's CA issued for
/// it at enrolment (`Enrolment`). Both clients (HTTPS and the WebSocket) present it once there is one.
final class UnitIdentity: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// What the certificate says, for `driverctl status`.
    struct CertificateFacts: Sendable, Equatable {
        var subject: String
        var serial: String
        var notBefore: Double
        var notAfter: Double
    }

    /// The certificate in force and what the backend last said about the unit; the status is derived from them.
    private struct State {
        /// The chain as the backend issued it (PEM) and what its certificate says; nil before enrolment.
        var certificate: (chain: String, facts: CertificateFacts)?
        /// The backend refused the enrolment or a renewal, or revoked the certificate (cleared by the next certificate).
        var refusal: (revoked: Bool, reason: String)?
        /// Why the last enrolment or renewal got no answer.
        var unanswered: String?
    }

    let keyPath: String
    let chainPath: String
    /// The key as PEM (swift-crypto's key type is not `Sendable`; it is parsed again where it signs).
    private let keyPEM: String
    private let claimTokenConfigured: Bool
    private let state: Mutex<State>

    /// Reads the key, or makes it when there is none; reads the certificate chain when there is one. A key that cannot
    /// be read is an error (never replaced: a new key would be a new unit, and its certificate would no longer match).
    init(directory: String, claimTokenConfigured: Bool) throws {
        keyPath = directory + "/unit-key.pem"
        chainPath = directory + "/unit-chain.pem"
        self.claimTokenConfigured = claimTokenConfigured
        if let pem = try DurableFile.contents(keyPath) {
            keyPEM = String(decoding: pem, as: UTF8.self)
            do {
                _ = try P256.Signing.PrivateKey(pemRepresentation: keyPEM)
            } catch {
                throw Failure(description: "the unit's key \(keyPath) cannot be read: \(error)")
            }
        } else {
            keyPEM = P256.Signing.PrivateKey().pemRepresentation
            try DurableFile.write(Data(keyPEM.utf8), to: keyPath)
        }
        var state = State()
        if let chain = try DurableFile.contents(chainPath).map({ String(decoding: $0, as: UTF8.self) }) {
            state.certificate = (chain, try Self.facts(ofChain: chain))
        }
        self.state = Mutex(state)
    }

    /// nil for a unit with neither a certificate nor a claim token.
    var status: UnitIdentityStatus? {
        let (state, claimTokenConfigured) = (self.state.withLock { $0 }, claimTokenConfigured)
        let facts = state.certificate?.facts
        func status(_ kind: UnitIdentityStatus.State, _ reason: String?) -> UnitIdentityStatus {
            UnitIdentityStatus(state: kind, subject: facts?.subject, serial: facts?.serial, notAfter: facts?.notAfter, reason: reason)
        }
        if let refusal = state.refusal { return status(refusal.revoked ? .revoked : .refused, refusal.reason) }
        if facts != nil { return status(.enrolled, state.unanswered) }
        return claimTokenConfigured ? status(.enrolling, state.unanswered) : nil
    }

    var facts: CertificateFacts? { state.withLock { $0.certificate?.facts } }

    /// The certificate chain and key to present, nil before enrolment.
    func clientIdentity() -> ClientIdentity? {
        state.withLock { $0.certificate }.map { ClientIdentity(certificateChainPEM: $0.chain, privateKeyPEM: keyPEM) }
    }

    /// The subject a unit asks for: named after its public key, so it is unique per key and stable across restarts.
    /// Checked readable at start.
    private var key: P256.Signing.PrivateKey {
        get throws { try P256.Signing.PrivateKey(pemRepresentation: keyPEM) }
    }

    func commonName() throws -> String {
        "driverd-" + TextFormat.hex(SHA256.hash(data: try key.publicKey.derRepresentation).prefix(8))
    }

    /// A PKCS#10 request for this unit's key, PEM.
    func certificateSigningRequest() throws -> String {
        let request = try CertificateSigningRequest(
            version: .v1, subject: try DistinguishedName { CommonName(try commonName()) }, privateKey: Certificate.PrivateKey(try key),
            attributes: CertificateSigningRequest.Attributes(), signatureAlgorithm: .ecdsaWithSHA256)
        return try request.serializeAsPEM().pemString
    }

    /// Keeps the chain the backend issued (durably, 0600), after checking it is for this key.
    func store(chain pem: String) throws -> CertificateFacts {
        let certificates = try Self.certificates(in: pem)
        guard let leaf = certificates.first, leaf.publicKey == Certificate.PublicKey(try key.publicKey) else {
            throw Failure(description: "the backend's certificate is not for this unit's key")
        }
        try DurableFile.write(Data(pem.utf8), to: chainPath)
        let facts = Self.facts(of: leaf)
        state.withLock { $0 = State(certificate: (pem, facts)) }
        return facts
    }

    /// The backend refused the enrolment or a renewal (`revoked`: it revoked the certificate); true when that is news.
    @discardableResult
    func refused(_ reason: String, revoked: Bool) -> Bool {
        state.withLock { state in
            defer { state.refusal = (revoked, reason) }
            return state.refusal?.revoked != revoked
        }
    }

    /// The backend did not answer an enrolment or a renewal: the certificate in force (if any) stays.
    func notAnswered(_ reason: String) { state.withLock { $0.unanswered = reason } }

    static func certificates(in pem: String) throws -> [Certificate] {
        let documents = try PEMDocument.parseMultiple(pemString: pem)
        guard !documents.isEmpty else { throw Failure(description: "no certificate in the chain") }
        return try documents.map { try Certificate(pemDocument: $0) }
    }

    static func facts(ofChain pem: String) throws -> CertificateFacts {
        guard let leaf = try certificates(in: pem).first else { throw Failure(description: "no certificate in the chain") }
        return facts(of: leaf)
    }

    static func facts(of certificate: Certificate) -> CertificateFacts {
        CertificateFacts(
            subject: "\(certificate.subject)", serial: TextFormat.hex(certificate.serialNumber.bytes),
            notBefore: certificate.notValidBefore.timeIntervalSince1970, notAfter: certificate.notValidAfter.timeIntervalSince1970)
    }
}
