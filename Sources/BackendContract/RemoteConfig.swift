/// `GET /api/v1/rider/config`: the fleet's configuration document for this unit, signed. `payload` is the
/// document's JSON (`RemoteConfigDocument`: `version`, `issuedAt`, `settings`) in base64, exactly as signed;
/// `signature` is Ed25519 over those bytes, base64, made with the fleet's key (its public half is in each unit's
/// `remote.public_key`). Signing the bytes, not a re-serialisation, leaves nothing to canonicalise.
public struct SignedConfig: Codable, Sendable, Equatable {
    public var payload: String
    public var signature: String?

    public init(payload: String, signature: String?) {
        self.payload = payload
        self.signature = signature
    }
}

/// The answer of `GET /api/v1/rider/config`: the unit's document, or none.
public struct ConfigReply: Codable, Sendable, Equatable {
    public var document: SignedConfig?
    public init(document: SignedConfig?) { self.document = document }
}

public enum ConfigAckStatus: String, Codable, Sendable, Equatable, CaseIterable {
    /// The unit runs it, and ran it for a healthy minute.
    case applied = "APPLIED"
    /// The unit will not run it (`reason` says why) and keeps what it runs.
    case refused = "REFUSED"
    /// The unit ran it and kept restarting: it went back to `runningVersion`.
    case rolledBack = "ROLLED_BACK"
}

/// `POST /api/v1/rider/config/acks`, sent with an `Idempotency-Key` header: a unit's answer to a document.
public struct ConfigAck: Codable, Sendable, Equatable {
    public var version: Int
    public var status: ConfigAckStatus
    public var reason: String?
    /// The version the unit runs after this answer (nil: its file alone).
    public var runningVersion: Int?
    /// Unix seconds, from the unit's trusted clock.
    public var at: Double

    public init(version: Int, status: ConfigAckStatus, reason: String?, runningVersion: Int?, at: Double) {
        self.version = version
        self.status = status
        self.reason = reason
        self.runningVersion = runningVersion
        self.at = at
    }
}
