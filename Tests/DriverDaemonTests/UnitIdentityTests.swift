@testable import DriverDaemon
import BackendContract
import Crypto
import DriverDomain
import DriverStore
import Foundation
import NIOSSL
import SwiftASN1
import Testing
import X509

/// The unit's key and certificate on disk through a rotation the fleet asked for, with the power cut at each step.
@Suite("Unit identity on disk")
struct UnitIdentityTests {
    /// A fleet CA in memory: issues a certificate for a CSR, as dispatch-sim does.
    struct TestCA {
        let key = P256.Signing.PrivateKey()
        let name = try! DistinguishedName { CommonName("test fleet CA") }

        func issue(_ csrPEM: String) throws -> String {
            let csr = try CertificateSigningRequest(pemEncoded: csrPEM)
            let now = Date()
            let certificate = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: csr.publicKey, notValidBefore: now - 60, notValidAfter: now + 86400,
                issuer: name, subject: csr.subject, signatureAlgorithm: .ecdsaWithSHA256, extensions: Certificate.Extensions(),
                issuerPrivateKey: .init(key))
            return try certificate.serializeAsPEM().pemString
        }
    }

    private func scratch() throws -> String {
        let directory = NSTemporaryDirectory() + "identity-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    private func file(_ path: String) throws -> String? {
        try DurableFile.contents(path).map { String(decoding: $0, as: UTF8.self) }
    }

    private func enrolled(_ directory: String, _ ca: TestCA) throws -> UnitIdentity {
        let identity = try UnitIdentity(directory: directory, claimTokenConfigured: true)
        let kept = try identity.store(chain: try ca.issue(try identity.certificateSigningRequest()))
        #expect(!kept.rotated)
        return identity
    }

    @Test("the status names an expired certificate from its expiry on, on a trusted clock, with the last attempt's error; before it, or on an untrusted clock, the error alone")
    func expiredStatus() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let identity = try enrolled(directory, TestCA())
        let notAfter = try #require(identity.facts?.notAfter)
        #expect(identity.status(at: Stamp(time: notAfter - 1, source: .gps))?.reason == nil)
        // Expired with no attempt failed yet (a unit started long after): the expiry alone.
        let quiet = try #require(identity.status(at: Stamp(time: notAfter, source: .gps))?.reason)
        #expect(quiet.hasPrefix("the certificate expired at ") && quiet.hasSuffix("until it is renewed"), "\(quiet)")
        identity.notAnswered("HTTPClientError.remoteConnectionClosed")
        #expect(identity.status(at: Stamp(time: notAfter - 1, source: .ntp))?.reason == "HTTPClientError.remoteConnectionClosed")
        #expect(identity.status(at: Stamp(time: notAfter + 3600, source: .unsynced))?.reason == "HTTPClientError.remoteConnectionClosed")
        let expired = try #require(identity.status(at: Stamp(time: notAfter + 1, source: .ntp)))
        #expect(expired.state == .enrolled && expired.reason?.contains("the certificate expired at ") == true, "\(expired)")
        #expect(expired.reason?.hasSuffix("(the last: HTTPClientError.remoteConnectionClosed)") == true, "\(expired)")
    }

    @Test("a rotation: the new key is on disk before the request, signed for by the old key; the certificate for it replaces both, the subject kept")
    func rotates() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ca = TestCA()
        let identity = try enrolled(directory, ca)
        let oldKey = try #require(try file(identity.keyPath))
        let oldChain = try #require(try identity.clientIdentity()?.certificateChainPEM)
        let subject = identity.facts?.subject

        let same = try #require(try identity.renewalRequest(rotating: false))
        let noNextKey = try file(identity.nextKeyPath) == nil
        #expect(same.previousKeySignature == nil && noNextKey)

        let request = try #require(try identity.renewalRequest(rotating: true))
        let nextKey = try #require(try file(identity.nextKeyPath), "the new key is durable before the request goes")
        let csr = try CertificateSigningRequest(pemEncoded: request.csr)
        let old = try Certificate(pemEncoded: oldChain)
        #expect(csr.publicKey == Certificate.PublicKey(try P256.Signing.PrivateKey(pemRepresentation: nextKey).publicKey))
        #expect(csr.publicKey != old.publicKey && csr.subject == old.subject)
        let signature = try #require(request.previousKeySignature.flatMap { Data(base64Encoded: $0) })
        #expect(old.publicKey.isValidSignature(signature, for: try PEMDocument(pemString: request.csr).derBytes, signatureAlgorithm: .ecdsaWithSHA256))
        // The request again (its answer lost): the same new key, not a third one.
        #expect(try CertificateSigningRequest(pemEncoded: try #require(try identity.renewalRequest(rotating: true)).csr).publicKey == csr.publicKey)

        let kept = try identity.store(chain: try ca.issue(request.csr))
        #expect(kept.rotated && kept.facts.subject == subject)
        let (key, next) = (try file(identity.keyPath), try file(identity.nextKeyPath))
        #expect(key == nextKey && next == nil && nextKey != oldKey)
        #expect(try identity.clientIdentity()?.privateKey == NIOSSLPrivateKey(bytes: Array(nextKey.utf8), format: .pem))
        #expect(try identity.renewalRequest(rotating: false)?.previousKeySignature == nil, "the rotation is over")
    }

    @Test("the power cut after the new certificate was written and before the key was renamed: the next start finishes the rotation")
    func cutBeforeTheRename() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ca = TestCA()
        let identity = try enrolled(directory, ca)
        let request = try #require(try identity.renewalRequest(rotating: true))
        let nextKey = try #require(try file(identity.nextKeyPath))
        // What `store` writes first, and nothing after it.
        try DurableFile.write(Data(try ca.issue(request.csr).utf8), to: identity.chainPath)

        let started = try UnitIdentity(directory: directory, claimTokenConfigured: true)
        let (key, next) = (try file(started.keyPath), try file(started.nextKeyPath))
        #expect(key == nextKey && next == nil)
        let presented = try #require(try started.clientIdentity())
        let leaf = try Certificate(pemEncoded: presented.certificateChainPEM)
        #expect(presented.privateKey == (try NIOSSLPrivateKey(bytes: Array(nextKey.utf8), format: .pem)))
        #expect(leaf.publicKey == Certificate.PublicKey(try P256.Signing.PrivateKey(pemRepresentation: nextKey).publicKey))
    }

    @Test("the power cut before the answer: the old key and certificate stay in force, and the next renewal goes on with the same new key")
    func cutBeforeTheAnswer() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ca = TestCA()
        let identity = try enrolled(directory, ca)
        let oldKey = try #require(try file(identity.keyPath))
        let first = try #require(try identity.renewalRequest(rotating: true))

        let started = try UnitIdentity(directory: directory, claimTokenConfigured: true)
        #expect(try started.clientIdentity()?.privateKey == NIOSSLPrivateKey(bytes: Array(oldKey.utf8), format: .pem))
        let again = try #require(try started.renewalRequest(rotating: false), "a rotation under way goes on unasked")
        #expect(again.previousKeySignature != nil)
        let (againKey, firstKey) = (try CertificateSigningRequest(pemEncoded: again.csr).publicKey, try CertificateSigningRequest(pemEncoded: first.csr).publicKey)
        #expect(againKey == firstKey)
    }

    @Test("a certificate for neither key is refused and changes nothing")
    func foreignCertificate() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ca = TestCA()
        let identity = try enrolled(directory, ca)
        let chain = try #require(try file(identity.chainPath))
        let stranger = try CertificateSigningRequest(
            version: .v1, subject: try DistinguishedName { CommonName("someone else") }, privateKey: .init(P256.Signing.PrivateKey()),
            attributes: CertificateSigningRequest.Attributes(), signatureAlgorithm: .ecdsaWithSHA256)
        #expect(throws: UnitIdentity.Failure.self) { try identity.store(chain: try ca.issue(try stranger.serializeAsPEM().pemString)) }
        #expect(try file(identity.chainPath) == chain)
    }
}
