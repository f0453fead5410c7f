import AsyncHTTPClient
@testable import BackendClient
import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import Testing
import X509

/// The backend's certificate judged while the system clock is not the time: by the trust roots, the name, and
/// what is known of the time (GPS time, or only a lower bound).
@Suite("The backend's certificate on an untrusted clock")
struct CertificateJudgeTests {
    /// A CA and a server certificate for `names`, valid over `validity` (seconds since 1970).
    struct Chain {
        let caPEM: String
        let presented: [NIOSSLCertificate]

        init(validity: ClosedRange<Double>, names: [GeneralName] = [.dnsName("backend.example")]) throws {
            let caKey = P256.Signing.PrivateKey()
            let caName = try DistinguishedName { CommonName("test fleet CA") }
            // The CA signs itself and the server's certificate, both valid over `validity`.
            func issue(_ subject: DistinguishedName, _ key: P256.Signing.PublicKey, authority: Bool) throws -> String {
                try Certificate(
                    version: .v3, serialNumber: .init(), publicKey: .init(key), notValidBefore: Date(timeIntervalSince1970: validity.lowerBound),
                    notValidAfter: Date(timeIntervalSince1970: validity.upperBound), issuer: caName, subject: subject,
                    signatureAlgorithm: .ecdsaWithSHA256,
                    extensions: try Certificate.Extensions {
                        if authority {
                            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                        } else {
                            Critical(BasicConstraints.notCertificateAuthority)
                            try ExtendedKeyUsage([.serverAuth])
                            SubjectAlternativeNames(names)
                        }
                    },
                    issuerPrivateKey: .init(caKey)
                ).serializeAsPEM().pemString
            }
            caPEM = try issue(caName, caKey.publicKey, authority: true)
            let server = try issue(try DistinguishedName { CommonName("backend") }, P256.Signing.PrivateKey().publicKey, authority: false)
            presented = [try NIOSSLCertificate(bytes: Array(server.utf8), format: .pem)]
        }

        func judge() throws -> CertificateJudge {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("judge-ca-\(UUID().uuidString).pem")
            try caPEM.write(to: file, atomically: true, encoding: .utf8)
            let judge = try CertificateJudge(caFile: file.path)
            try FileManager.default.removeItem(at: file)
            return judge
        }
    }

    static let release = 1_795_910_400.0  // 2026-11-29

    static func taken(_ verdict: Result<Void, CertificateRefusal>) -> Bool {
        if case .success = verdict { return true }
        return false
    }
    static let year = 365 * 86400.0

    @Test("not valid yet on a clock that is only a lower bound: taken; expired before that bound: refused")
    func lowerBound() async throws {
        let chain = try Chain(validity: (Self.release + Self.year)...(Self.release + 2 * Self.year))
        let judge = try chain.judge()
        #expect(Self.taken(await judge.verify(chain.presented, hostname: "backend.example", at: .atLeast(Self.release))))
        let expired = try Chain(validity: (Self.release - 2 * Self.year)...(Self.release - Self.year))
        #expect(!Self.taken(try await expired.judge().verify(expired.presented, hostname: "backend.example", at: .atLeast(Self.release))))
    }

    @Test("at a known time (GPS) both ends count")
    func knownTime() async throws {
        let chain = try Chain(validity: Self.release...(Self.release + Self.year))
        let judge = try chain.judge()
        #expect(Self.taken(await judge.verify(chain.presented, hostname: "backend.example", at: .known(Self.release + 86400))))
        #expect(!Self.taken(await judge.verify(chain.presented, hostname: "backend.example", at: .known(Self.release - 86400))))
        #expect(!Self.taken(await judge.verify(chain.presented, hostname: "backend.example", at: .known(Self.release + 2 * Self.year))))
    }

    @Test("another CA's certificate, or another name's, is refused whatever the time")
    func trustAndName() async throws {
        let chain = try Chain(validity: Self.release...(Self.release + Self.year))
        let stranger = try Chain(validity: Self.release...(Self.release + Self.year))
        #expect(!Self.taken(try await stranger.judge().verify(chain.presented, hostname: "backend.example", at: .atLeast(Self.release))))
        #expect(!Self.taken(try await chain.judge().verify(chain.presented, hostname: "elsewhere.example", at: .atLeast(Self.release))))
        let address = try Chain(validity: Self.release...(Self.release + Self.year), names: [.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
        #expect(Self.taken(try await address.judge().verify(address.presented, hostname: "127.0.0.1", at: .atLeast(Self.release))))
        #expect(!Self.taken(try await address.judge().verify(address.presented, hostname: "127.0.0.2", at: .atLeast(Self.release))))
    }

    @Test("the URL that reaches the tunnel's socket")
    func unixURL() {
        #expect(URL(httpURLWithSocketPath: "/var/lib/driverd/backend-tls.sock", uri: "/api/v1/health")?.absoluteString
            == "http+unix://%2Fvar%2Flib%2Fdriverd%2Fbackend-tls.sock/api/v1/health")
    }
}
