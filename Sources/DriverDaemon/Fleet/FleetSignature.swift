import Crypto
import DriverAPI
import FoundationEssentials

/// The fleet's Ed25519 signature over a configuration document's or a release's bytes (driverd checks it, and
/// driverd-update again).
public enum FleetSignature {
    /// Whether `signature` (base64) is the signature of `payload` by the key `publicKey` (base64 of 32 bytes).
    public static func isValid(_ signature: String, of payload: Data, publicKey: String) -> Bool {
        // A key that is not 32 bytes is the expected "no": the configuration's check names a bad key at load.
        guard let keyBytes = Data(base64Encoded: publicKey), let key = try? Curve25519.Signing.PublicKey(rawRepresentation: keyBytes),
              let bytes = Data(base64Encoded: signature)
        else { return false }
        return key.isValidSignature(bytes, for: payload)
    }

    /// A short, stable name for a document's bytes (in idempotency keys and logs).
    static func digest(_ payload: Data) -> String { String(sha256Hex(payload).prefix(12)) }

    /// SHA-256 in lower-case hex (a bundle's checksum; a document's name).
    public static func sha256Hex(_ bytes: Data) -> String { hex(SHA256.hash(data: bytes)) }

    public static func hex(_ digest: SHA256.Digest) -> String { TextFormat.hex(digest) }
}
