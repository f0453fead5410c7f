import BackendClient
import BackendContract
import Crypto
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials
import Logging
import Synchronization
import SwiftASN1
import X509

/// The unit's own identity towards the backend: an ECDSA P-256 key made on the unit at its first start, which never
/// leaves it (made and held by the TPM when there is one, else a 0600 file in the state directory; written durably
/// either way: `UnitKeyStore`), and the certificate the fleet's CA issued for it at enrolment. Both clients (HTTPS
/// and the WebSocket) present it once there is one.
///
/// When the fleet asks for a new key at a renewal (`KEY_ROTATION_REQUIRED`), the new key is written beside the old
/// one (`unit-key.next.pem` or `.tpm`) before the request goes, and replaces it only once the certificate for it is kept: a
/// power cut at any point leaves a key that matches the certificate in force, and a rotation whose answer was lost
/// goes again with the same new key.
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

    /// What keeping an issued chain did.
    struct Kept: Sendable, Equatable {
        var facts: CertificateFacts
        /// The chain was for the new key, which is the unit's key from now on.
        var rotated: Bool
    }

    /// The keys, the certificate in force and what the backend last said about the unit; the status is derived.
    private struct State {
        var key: UnitKey
        /// A new key made for a rotation the fleet asked for, until the certificate for it is kept.
        var nextKey: UnitKey?
        /// The chain as the backend issued it (PEM) and what its certificate says; nil before enrolment.
        var certificate: (chain: String, facts: CertificateFacts)?
        /// The backend refused the enrolment or a renewal, or revoked the certificate (cleared by the next certificate).
        var refusal: (revoked: Bool, reason: String)?
        /// Why the last enrolment or renewal got no answer.
        var unanswered: String?
    }

    let keyPath: String
    let nextKeyPath: String
    let chainPath: String
    let keyStore: UnitKeyStore
    private let claimTokenConfigured: Bool
    private let state: Mutex<State>

    /// Reads the key, or makes it when there is none; reads the certificate chain when there is one, and finishes a
    /// rotation a power cut interrupted after its certificate was kept. A key that cannot be read is an error (never
    /// replaced: a new key would be a new unit, and its certificate would no longer match).
    init(directory: String, keyStore: UnitKeyStore = .files, claimTokenConfigured: Bool) throws {
        keyPath = UnitKeyStore.keyPath(in: directory, suffix: keyStore.suffix)
        nextKeyPath = UnitKeyStore.keyPath(in: directory, suffix: keyStore.suffix, next: true)
        chainPath = directory + "/unit-chain.pem"
        self.keyStore = keyStore
        self.claimTokenConfigured = claimTokenConfigured
        var state = State(key: try Self.readKey(keyPath, keyStore) ?? Self.makeKey(keyPath, keyStore), nextKey: try Self.readKey(nextKeyPath, keyStore))
        if let chain = try DurableFile.contents(chainPath).map({ String(decoding: $0, as: UTF8.self) }) {
            let leaf = try Self.leaf(ofChain: chain)
            if let next = state.nextKey, try next.publicKey == leaf.publicKey {
                try DurableFile.rename(nextKeyPath, to: keyPath)
                (state.key, state.nextKey) = (next, nil)
            }
            state.certificate = (chain, Self.facts(of: leaf))
        }
        self.state = Mutex(state)
    }

    private static func readKey(_ path: String, _ store: UnitKeyStore) throws -> UnitKey? {
        guard let stored = try DurableFile.contents(path) else { return nil }
        do {
            return try store.read(stored)
        } catch {
            throw Failure(description: "the unit's key \(path) cannot be read: \(error)")
        }
    }

    private static func makeKey(_ path: String, _ store: UnitKeyStore) throws -> UnitKey {
        let key = try store.make()
        try DurableFile.write(key.stored, to: path)
        return key
    }

    /// nil for a unit with neither a certificate nor a claim token. Judged at `now`: a certificate that has expired on a
    /// trusted clock is said to be the cause from its expiry on, whatever the last renewal attempt met and whenever it
    /// ended (an attempt at the expiry may hang on a connect timeout).
    func status(at now: Stamp) -> UnitIdentityStatus? {
        let (state, claimTokenConfigured) = (self.state.withLock { $0 }, claimTokenConfigured)
        let facts = state.certificate?.facts
        func status(_ kind: UnitIdentityStatus.State, _ reason: String?) -> UnitIdentityStatus {
            UnitIdentityStatus(state: kind, subject: facts?.subject, serial: facts?.serial, notAfter: facts?.notAfter, reason: reason)
        }
        if let refusal = state.refusal { return status(refusal.revoked ? .revoked : .refused, refusal.reason) }
        guard let facts else { return claimTokenConfigured ? status(.enrolling, state.unanswered) : nil }
        guard CertificateRenewal.hasExpired(notAfter: facts.notAfter, now: now.time, clockTrusted: now.source != .unsynced) else {
            return status(.enrolled, state.unanswered)
        }
        return status(.enrolled, "the certificate expired at \(TextFormat.UTC(facts.notAfter).iso8601): the backend refuses this unit until it is renewed"
            + (state.unanswered.map { "; renewal tried every 10 to 20 s (the last: \($0))" } ?? ""))
    }

    var facts: CertificateFacts? { state.withLock { $0.certificate?.facts } }

    /// The certificate chain and key to present, nil before enrolment.
    func clientIdentity() throws -> ClientIdentity? {
        let (certificate, key) = state.withLock { ($0.certificate, $0.key) }
        guard let certificate else { return nil }
        return ClientIdentity(certificateChainPEM: certificate.chain, privateKey: try key.tlsKey)
    }

    /// The subject a unit asks for at enrolment: named after its first key, so it is unique per unit; renewals keep
    /// it, a new key included.
    func commonName() throws -> String {
        var serializer = DER.Serializer()
        try serializer.serialize(try state.withLock { $0.key }.publicKey)
        return "driverd-" + TextFormat.hex(SHA256.hash(data: serializer.serializedBytes).prefix(8))
    }

    /// The enrolment's PKCS#10 request for this unit's key, PEM.
    func certificateSigningRequest() throws -> String {
        let key = state.withLock { $0.key }
        return try Self.request(subject: try DistinguishedName { CommonName(try commonName()) }, key: key).serializeAsPEM().pemString
    }

    /// A renewal of the certificate in force (nil before enrolment), for its subject: with the same key, or with a
    /// new one (`rotating`, or a rotation under way), then signed by the old key too. The new key is on disk before
    /// the request leaves.
    func renewalRequest(rotating: Bool) throws -> RenewalRequest? {
        let (key, pending, certificate) = state.withLock { ($0.key, $0.nextKey, $0.certificate) }
        guard let certificate else { return nil }
        let subject = try Self.leaf(ofChain: certificate.chain).subject
        guard rotating || pending != nil else {
            return RenewalRequest(certificate: certificate.chain, csr: try Self.request(subject: subject, key: key).serializeAsPEM().pemString)
        }
        let next: UnitKey
        if let pending {
            next = pending
        } else {
            next = try Self.makeKey(nextKeyPath, keyStore)
            state.withLock { $0.nextKey = next }
        }
        let csr = try Self.request(subject: subject, key: next).serializeAsPEM()
        let signature = Data(try key.signature(for: csr.derBytes)).base64EncodedString()
        return RenewalRequest(certificate: certificate.chain, csr: csr.pemString, previousKeySignature: signature)
    }

    private static func request(subject: DistinguishedName, key: UnitKey) throws -> CertificateSigningRequest {
        try CertificateSigningRequest(
            version: .v1, subject: subject, privateKey: try key.certificateKey, attributes: CertificateSigningRequest.Attributes(),
            signatureAlgorithm: .ecdsaWithSHA256)
    }

    /// Keeps the chain the backend issued (durably, 0600), after checking it is for this unit's key or for the new
    /// key of a rotation, which then replaces the old one (the chain first: see the type's comment).
    func store(chain pem: String) throws -> Kept {
        let (key, pending) = state.withLock { ($0.key, $0.nextKey) }
        guard let leaf = try Self.certificates(in: pem).first else { throw Failure(description: "no certificate in the chain") }
        let kept: UnitKey
        if leaf.publicKey == (try key.publicKey) {
            kept = key
        } else if let pending, leaf.publicKey == (try pending.publicKey) {
            kept = pending
        } else {
            throw Failure(description: "the backend's certificate is not for this unit's key")
        }
        try DurableFile.write(Data(pem.utf8), to: chainPath)
        if kept != key { try DurableFile.rename(nextKeyPath, to: keyPath) }
        let facts = Self.facts(of: leaf)
        state.withLock { $0 = State(key: kept, certificate: (pem, facts)) }
        return Kept(facts: facts, rotated: kept != key)
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

    /// An enrolment or renewal failed without a refusal and waits to be tried again.
    var awaitsAnswer: Bool { state.withLock { $0.unanswered != nil && $0.refusal == nil } }

    static func certificates(in pem: String) throws -> [Certificate] {
        let documents = try PEMDocument.parseMultiple(pemString: pem)
        guard !documents.isEmpty else { throw Failure(description: "no certificate in the chain") }
        return try documents.map { try Certificate(pemDocument: $0) }
    }

    static func leaf(ofChain pem: String) throws -> Certificate {
        guard let leaf = try certificates(in: pem).first else { throw Failure(description: "no certificate in the chain") }
        return leaf
    }

    static func facts(of certificate: Certificate) -> CertificateFacts {
        CertificateFacts(
            subject: "\(certificate.subject)", serial: TextFormat.hex(certificate.serialNumber.bytes),
            notBefore: certificate.notValidBefore.timeIntervalSince1970, notAfter: certificate.notValidAfter.timeIntervalSince1970)
    }
}
