import BackendContract
import Crypto
import Foundation

/// Bearer tokens: JWTs signed with HS256. An access token expires after `accessTTL` seconds; a refresh token
/// after `refreshTTL`. A token carries the driver's token generation, so bumping it revokes them all.
struct TokenIssuer: Sendable {
    enum Kind: String, Codable { case access, refresh }

    struct Claims: Codable, Equatable {
        var sub: String
        var typ: Kind
        var iat: Int
        var exp: Int
        var gen: Int
    }

    enum Failure: Error, Equatable {
        case malformed, badSignature, wrongKind
        /// Signed by this issuer but past its expiry: its claims, so a revocation can be told first.
        case expired(Claims)
    }

    /// The HMAC key's bytes (kept as Data: SymmetricKey is not Sendable).
    let secret: Data
    let accessTTL: Int
    let refreshTTL: Int

    func issue(driverId: String, language: String?, generation: Int, now: Double) -> TokenResponse {
        let iat = Int(now)
        // Expiry rounds up: a token lives at least its TTL (rounding down, one issued at x.99 with a TTL of 1 s
        // would die 10 ms later).
        func expiry(_ ttl: Int) -> Int { Int((now + Double(ttl)).rounded(.up)) }
        return TokenResponse(
            accessToken: sign(Claims(sub: driverId, typ: .access, iat: iat, exp: expiry(accessTTL), gen: generation)),
            refreshToken: sign(Claims(sub: driverId, typ: .refresh, iat: iat, exp: expiry(refreshTTL), gen: generation)),
            expiresIn: accessTTL, driverId: driverId, language: language)
    }

    func verify(_ token: String, kind: Kind, now: Double) -> Result<Claims, Failure> {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let signature = Self.base64URLDecode(parts[2]),
              let payload = Self.base64URLDecode(parts[1])
        else { return .failure(.malformed) }
        let signed = Data("\(parts[0]).\(parts[1])".utf8)
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signed, using: SymmetricKey(data: secret)) else {
            return .failure(.badSignature)
        }
        // Not our claims: the expected "malformed" answer.
        guard let claims = try? JSONDecoder().decode(Claims.self, from: payload) else { return .failure(.malformed) }
        guard claims.typ == kind else { return .failure(.wrongKind) }
        guard Double(claims.exp) > now else { return .failure(.expired(claims)) }
        return .success(claims)
    }

    private func sign(_ claims: Claims) -> String {
        let header = Self.base64URL(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload = Self.base64URL((try? SimJSON.encoder.encode(claims)) ?? Data())  // cannot fail: strings and integers
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(header).\(payload)".utf8), using: SymmetricKey(data: secret))
        return "\(header).\(payload).\(Self.base64URL(Data(mac)))"
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func base64URLDecode(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
