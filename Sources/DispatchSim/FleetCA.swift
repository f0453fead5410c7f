import BackendContract
import Crypto
import DriverAPI
import Foundation
import NIOCore
import NIOSSL
import SwiftASN1
import Synchronization
import X509

/// dispatch-sim as the fleet's certificate authority (`--tls-dir`; test keys only, made on first use and kept in
/// that directory): a CA, the server's certificate for 127.0.0.1 and localhost, and the units' certificates issued
/// at enrolment for a claim token. The HTTPS listener asks every connection for a client certificate and verifies one
/// when it is given; every API request but the enrolment needs one (`UnitCertificateCheck`).
public final class FleetCA: Sendable {
    public struct Settings: Sendable {
        public var directory: String
        /// Claim token → enrolments it may still make.
        public var claims: [String: Int]
        /// Lifetime of a unit's certificate, seconds.
        public var unitCertificateSeconds: Double

        public init(directory: String, claims: [String: Int] = [:], unitCertificateSeconds: Double = 30 * 86400) {
            self.directory = directory
            self.claims = claims
            self.unitCertificateSeconds = unitCertificateSeconds
        }
    }

    /// The CA's certificate, PEM (`ca.pem` in the directory: the units' `backend.ca_file`).
    let caPEM: String
    private let caKeyPEM: String
    private let serverChainPEM: String
    private let serverKeyPEM: String
    private let unitCertificateSeconds: Double
    private let claims: Mutex<[String: Int]>
    /// Serial (hex) → subject of every certificate issued, in order.
    private let issued = Mutex<[(serial: String, subject: String)]>([])
    /// Serials (hex) revoked: their requests and renewals are refused `UNIT_REVOKED`.
    private let revoked = Mutex<Set<String>>([])
    /// Serials (hex) whose unit must move to a new key: a renewal for the same key is answered `KEY_ROTATION_REQUIRED`.
    private let rotationAsked = Mutex<Set<String>>([])

    init(_ settings: Settings) throws {
        let directory = URL(fileURLWithPath: settings.directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let files = ["ca.pem", "ca-key.pem", "server.pem", "server-key.pem"].map { directory.appendingPathComponent($0) }
        if files.allSatisfy({ FileManager.default.fileExists(atPath: $0.path) }) {
            let texts = try files.map { try String(contentsOf: $0, encoding: .utf8) }
            (caPEM, caKeyPEM, serverChainPEM, serverKeyPEM) = (texts[0], texts[1], texts[2], texts[3])
        } else {
            let now = Date()
            let caKey = P256.Signing.PrivateKey()
            let caName = try DistinguishedName { CommonName("dispatch-sim test fleet CA") }
            let ca = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey), notValidBefore: now - 3600,
                notValidAfter: now + 20 * 365 * 86400, issuer: caName, subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                },
                issuerPrivateKey: .init(caKey))
            let serverKey = P256.Signing.PrivateKey()
            let server = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(serverKey.publicKey), notValidBefore: now - 3600,
                notValidAfter: now + 20 * 365 * 86400, issuer: caName, subject: try DistinguishedName { CommonName("dispatch-sim") },
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    try ExtendedKeyUsage([.serverAuth])
                    SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
                },
                issuerPrivateKey: .init(caKey))
            caPEM = try ca.serializeAsPEM().pemString
            caKeyPEM = caKey.pemRepresentation
            serverChainPEM = try server.serializeAsPEM().pemString
            serverKeyPEM = serverKey.pemRepresentation
            for (file, text) in zip(files, [caPEM, caKeyPEM, serverChainPEM, serverKeyPEM]) {
                try text.write(to: file, atomically: true, encoding: .utf8)
            }
        }
        unitCertificateSeconds = settings.unitCertificateSeconds
        claims = Mutex(settings.claims)
    }

    /// The HTTPS listener's TLS: the server's certificate, and a client certificate verified against the CA when
    /// one is given (the enrolment comes without).
    func serverTLS() throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(serverChainPEM.utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(serverKeyPEM.utf8), format: .pem)))
        tls.certificateVerification = .optionalVerification
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(caPEM.utf8)))
        return tls
    }

    /// Sets how many enrolments `token` may still make (0 uses it up).
    func setClaim(_ token: String, uses: Int) { claims.withLock { $0[token] = max(0, uses) } }

    var issuedCount: Int { issued.withLock { $0.count } }

    static func serial(of certificate: Certificate) -> String {
        TextFormat.hex(certificate.serialNumber.bytes)
    }

    func revoke(serial: String) { _ = revoked.withLock { $0.insert(serial.lowercased()) } }

    func isRevoked(serial: String) -> Bool { revoked.withLock { $0.contains(serial) } }

    /// The unit with this certificate renews onto a new key next time.
    func askRotation(serial: String) { _ = rotationAsked.withLock { $0.insert(serial.lowercased()) } }

    /// A CSR from PEM whose signature matches its key (the unit holds the key), and its DER (what a rotation's
    /// `previousKeySignature` signs).
    private static func signedRequest(_ pem: String) throws(SimHTTPError) -> (csr: CertificateSigningRequest, der: [UInt8]) {
        let csr: CertificateSigningRequest
        let der: [UInt8]
        do {
            der = try PEMDocument(pemString: pem).derBytes
            csr = try CertificateSigningRequest(derEncoded: der)
        } catch {
            throw SimHTTPError(.badRequest, "csr is not a PEM certificate request: \(error)")
        }
        guard csr.publicKey.isValidSignature(csr.signature, for: csr) else {
            throw SimHTTPError(.badRequest, "the CSR's signature does not match its key")
        }
        return (csr, der)
    }

    /// A unit's certificate for its CSR, if the claim token has a use left and the CSR is signed by its key.
    func enrol(_ request: EnrolmentRequest, now: Double) throws(SimHTTPError) -> IssuedCertificate {
        let csr = try Self.signedRequest(request.csr).csr
        let taken = claims.withLock { claims -> Bool in
            guard let left = claims[request.claimToken], left > 0 else { return false }
            claims[request.claimToken] = left - 1
            return true
        }
        guard taken else { throw SimHTTPError(.claimRefused, "the claim token is unknown or used up") }
        return try issue(for: csr, now: now)
    }

    /// A new certificate for the same subject: the old certificate must be this CA's (expired or not) and not
    /// revoked, and the CSR signed by the key it names; or, for a new key, signed by the new key and, through
    /// `previousKeySignature`, by the old one. No client certificate needed: a unit back from weeks away renews with
    /// the one that expired meanwhile. A unit asked to rotate (`askRotation`) gets `KEY_ROTATION_REQUIRED` for the same key.
    func renew(_ request: RenewalRequest, now: Double) throws(SimHTTPError) -> IssuedCertificate {
        let (csr, der) = try Self.signedRequest(request.csr)
        let old: Certificate
        let ca: Certificate
        do {
            guard let document = try PEMDocument.parseMultiple(pemString: request.certificate).first else {
                throw SimHTTPError(.badRequest, "no certificate given")
            }
            old = try Certificate(pemDocument: document)
            ca = try Certificate(pemEncoded: caPEM)
        } catch let error as SimHTTPError {
            throw error
        } catch {
            throw SimHTTPError(.badRequest, "certificate is not a PEM certificate: \(error)")
        }
        guard old.issuer == ca.subject, ca.publicKey.isValidSignature(old.signature, for: old) else {
            throw SimHTTPError(.certificateRequired, "the certificate was not issued by this fleet's CA")
        }
        guard !isRevoked(serial: Self.serial(of: old)) else { throw SimHTTPError(.unitRevoked, "this unit's certificate was revoked") }
        guard csr.subject == old.subject else { throw SimHTTPError(.badRequest, "the CSR is not for the certificate's subject") }
        let serial = Self.serial(of: old)
        if csr.publicKey == old.publicKey {
            guard !rotationAsked.withLock({ $0.contains(serial) }) else {
                throw SimHTTPError(.keyRotationRequired, "this fleet wants the unit on a new key: renew with one, signed by this one too")
            }
        } else {
            guard let signature = request.previousKeySignature.flatMap({ Data(base64Encoded: $0) }),
                  old.publicKey.isValidSignature(signature, for: der, signatureAlgorithm: .ecdsaWithSHA256)
            else {
                throw SimHTTPError(.badRequest, "a CSR for a new key needs previousKeySignature, by the certificate's key")
            }
        }
        let issued = try issue(for: csr, now: now)
        _ = rotationAsked.withLock { $0.remove(serial) }
        return issued
    }

    private func issue(for csr: CertificateSigningRequest, now: Double) throws(SimHTTPError) -> IssuedCertificate {
        do {
            let caKey = try P256.Signing.PrivateKey(pemRepresentation: caKeyPEM)
            let ca = try Certificate(pemEncoded: caPEM)
            let start = Date(timeIntervalSince1970: now)
            let certificate = try Certificate(
                // Back-dated a little for units whose clocks run behind (at most 5 minutes, a twentieth of a short life).
                version: .v3, serialNumber: .init(), publicKey: csr.publicKey, notValidBefore: start - min(300, unitCertificateSeconds / 20),
                notValidAfter: start + unitCertificateSeconds, issuer: ca.subject, subject: csr.subject, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    try ExtendedKeyUsage([.clientAuth])
                },
                issuerPrivateKey: .init(caKey))
            issued.withLock { $0.append((Self.serial(of: certificate), "\(csr.subject)")) }
            return IssuedCertificate(certificateChain: try certificate.serializeAsPEM().pemString)
        } catch {
            throw SimHTTPError(.internalError, "the certificate could not be issued: \(error)")
        }
    }
}
