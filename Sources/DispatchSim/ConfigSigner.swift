import BackendContract
import Crypto
import DispatchSimCore
import DriverDomain
import Foundation

/// Signs configuration documents and releases as a fleet would, for tests and the demo: the test fleet's key (its
/// public half is `GET /sim/config`'s `publicKey`, for a unit's `remote.public_key`; releases have a key of their
/// own, `GET /sim/releases`'s `publicKey`, for `update.public_key`), another key (what a unit must refuse), or none.
/// Every key is derived from a fixed phrase: they are test keys, known to everyone.
enum ConfigSigner {
    enum Signing: String, Codable, Sendable {
        case fleet, other, none
    }

    // Made when needed (cheap): the key types are not Sendable, so no static instance is shared.
    static var fleetKey: Curve25519.Signing.PrivateKey { key("dispatch-sim test fleet key: never use outside tests") }
    static var otherKey: Curve25519.Signing.PrivateKey { key("dispatch-sim some other key") }

    static var releaseKey: Curve25519.Signing.PrivateKey { key("dispatch-sim test release key: never use outside tests") }

    static var publicKey: String { fleetKey.publicKey.rawRepresentation.base64EncodedString() }
    static var releasePublicKey: String { releaseKey.publicKey.rawRepresentation.base64EncodedString() }

    static func sign(_ document: RemoteConfigDocument, with signing: Signing) throws -> SignedConfig {
        let payload = try JSONEncoder().encode(document)
        return SignedConfig(payload: payload.base64EncodedString(), signature: try signature(of: payload, signing, fleet: fleetKey))
    }

    static func sign(_ manifest: ReleaseManifest, with signing: Signing) throws -> SignedRelease {
        let payload = try JSONEncoder().encode(manifest)
        return SignedRelease(payload: payload.base64EncodedString(), signature: try signature(of: payload, signing, fleet: releaseKey))
    }

    private static func signature(of payload: Data, _ signing: Signing, fleet: Curve25519.Signing.PrivateKey) throws -> String? {
        switch signing {
        case .fleet: try fleet.signature(for: payload).base64EncodedString()
        case .other: try otherKey.signature(for: payload).base64EncodedString()
        case .none: nil
        }
    }

    private static func key(_ phrase: String) -> Curve25519.Signing.PrivateKey {
        try! Curve25519.Signing.PrivateKey(rawRepresentation: Data(SHA256.hash(data: Data(phrase.utf8))))
    }
}

/// `PUT /sim/config`: a document for a driver's unit, signed as asked.
struct ConfigPublication: Codable, Sendable {
    var driverId: String?
    var version: Int
    var settings: [String: ConfigValue]
    var signing: ConfigSigner.Signing?
}

/// `GET /sim/config`.
struct ConfigOverview: Codable, Sendable {
    var publicKey: String
    var documents: [String: SignedConfig]
    var acks: [ConfigAckEntry]
}
