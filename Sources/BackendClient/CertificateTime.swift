import FoundationEssentials
import NIOCore
import NIOSSL
import SwiftASN1
import Synchronization
@_spi(DisableValidityCheck) import X509

/// The time the backend's certificate is judged at. TLS judges by the system clock; a unit whose clock nothing
/// vouches for (no NTP: it may read 1970 after a boot without a real-time clock, or years ahead) must not refuse
/// the backend on that clock alone (a day without TLS is a day without a backend).
public enum CertificateTime: Sendable, Equatable {
    /// The kernel says the system clock is synchronised: TLS judges by it, as everywhere.
    case system
    /// The system clock is not synchronised but the time is known (GPS time): certificates are judged at it.
    case known(Double)
    /// Nothing vouches for the time, which is at least this (the release's own date): a certificate is refused as
    /// expired only if it expired before then, and never as not yet valid.
    case atLeast(Double)
}

/// When the backend's certificate is judged by `CertificateJudge` rather than by TLS on the system clock, for the HTTP
/// client's tunnels and the WebSocket alike: one time, one judge (the CA file read once, when first needed).
public final class CertificateJudging: Sendable {
    private let caFile: String?
    private let time: @Sendable () -> CertificateTime
    private let judge = Mutex<CertificateJudge?>(nil)

    public init(caFile: String?, time: @escaping @Sendable () -> CertificateTime) {
        self.caFile = caFile
        self.time = time
    }

    /// Whether TLS's own check (the system clock) applies now.
    var bySystemClock: Bool { time() == .system }

    /// The verification for a connection to `hostname` made now: nil while TLS's own check applies, else the
    /// judge's at the time known when the handshake asks; a refusal's reason goes to `refused`.
    func verification(
        hostname: String, refused: @escaping @Sendable (CertificateRefusal) -> Void
    ) throws -> NIOSSLCustomVerificationCallback? {
        guard !bySystemClock else { return nil }
        let judge = try judge.withLock { judge in
            if let judge { return judge }
            let made = try CertificateJudge(caFile: caFile)
            judge = made
            return made
        }
        return judge.callback(hostname: hostname, time: time, refused: refused)
    }
}

/// Judges the backend's certificate chain when the time is not the system clock's: the same trust roots
/// (`backend.ca_file`, or the system's), the same check of the name, the validity at the time that is known.
public struct CertificateJudge: Sendable {
    private let roots: CertificateStore

    /// Reads the CA file once (nil: the system's roots, read when first needed).
    public init(caFile: String?) throws {
        guard let caFile else {
            roots = CertificateStore.systemTrustRoots
            return
        }
        let text = try String(decoding: Data(contentsOf: URL(fileURLWithPath: caFile)), as: UTF8.self)
        roots = CertificateStore(try PEMDocument.parseMultiple(pemString: text).map { try Certificate(pemDocument: $0) })
    }

    /// The verdict on the chain the backend presented for `hostname` (an address when it is one), at `time`.
    func verify(_ presented: [NIOSSLCertificate], hostname: String, at time: CertificateTime) async -> Result<Void, CertificateRefusal> {
        let chain: [Certificate]
        do {
            chain = try presented.map { try Certificate(derEncoded: try $0.toDERBytes()) }
        } catch {
            return .failure(CertificateRefusal(reason: "the backend's certificate cannot be read: \(error)"))
        }
        guard let leaf = chain.first else { return .failure(CertificateRefusal(reason: "the backend presented no certificate")) }
        let isAddress = Self.isAddress(hostname)
        var verifier = Verifier(rootCertificates: roots) {
            RFC5280Policy.withValidityCheckDisabled()
            ValidityAtKnownTime(time: time)
            ServerIdentityPolicy(serverHostname: isAddress ? nil : hostname, serverIP: isAddress ? hostname : nil)
        }
        switch await verifier.validate(leaf: leaf, intermediates: CertificateStore(chain.dropFirst())) {
        case .validCertificate:
            return .success(())
        case .couldNotValidate(let failures):
            let reasons = failures.map { "\($0.policyFailureReason)" }
            return .failure(CertificateRefusal(reason: reasons.isEmpty ? "no chain to a trusted root" : reasons.joined(separator: "; ")))
        }
    }

    /// Whether `host` is an IP address (checked against the certificate's addresses, and sent as no name in SNI).
    static func isAddress(_ host: String) -> Bool {
        host.utf8.allSatisfy { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: ":") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// NIOSSL's verification replaced by this judge's, at the time `time()` gives when the handshake asks; a refusal's
    /// reason goes to `refused` (TLS itself only says that verification failed).
    public func callback(
        hostname: String, time: @escaping @Sendable () -> CertificateTime, refused: @escaping @Sendable (CertificateRefusal) -> Void
    ) -> NIOSSLCustomVerificationCallback {
        { presented, promise in
            promise.completeWithTask {
                switch await verify(presented, hostname: hostname, at: time()) {
                case .success:
                    return .certificateVerified
                case .failure(let refusal):
                    refused(refusal)
                    return .failed
                }
            }
        }
    }
}

/// Why the judge refused the backend's certificate.
public struct CertificateRefusal: Error, CustomStringConvertible {
    public var reason: String
    public var description: String { "the backend's certificate was refused: \(reason)" }
}

/// The certificates' validity at what is known of the time: both bounds at a known time; only the end, against a
/// lower bound, when nothing more is known.
struct ValidityAtKnownTime: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = []
    let time: CertificateTime

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        for certificate in chain {
            switch time {
            case .system:
                let now = Date()
                if now < certificate.notValidBefore || now > certificate.notValidAfter {
                    return .failsToMeetPolicy(reason: "\(certificate.subject) is not valid at \(now)")
                }
            case .known(let seconds):
                let now = Date(timeIntervalSince1970: seconds)
                if now < certificate.notValidBefore || now > certificate.notValidAfter {
                    return .failsToMeetPolicy(reason: "\(certificate.subject) is not valid at GPS time \(now)")
                }
            case .atLeast(let seconds):
                let earliest = Date(timeIntervalSince1970: seconds)
                if certificate.notValidAfter < earliest {
                    return .failsToMeetPolicy(reason: "\(certificate.subject) expired \(certificate.notValidAfter), before \(earliest)")
                }
            }
        }
        return .meetsPolicy
    }
}
