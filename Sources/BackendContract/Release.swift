/// A release of a package the fleet publishes (`ReleaseManifest`), signed with the fleet's release key (its
/// public half is each unit's `update.public_key`, not the configuration key). As with configuration documents,
/// `payload` is the manifest's JSON in base64 exactly as signed, and `signature` is Ed25519 over those bytes.
public struct SignedRelease: Codable, Sendable, Equatable {
    public var payload: String
    public var signature: String?

    public init(payload: String, signature: String?) {
        self.payload = payload
        self.signature = signature
    }
}

/// What a release is: the package's name, version and architecture, and its bytes' size and SHA-256, whole and
/// in chunks of `chunkSize` (the last one shorter), so that a download resumes after the last good chunk.
public struct ReleaseManifest: Codable, Sendable, Equatable {
    public var package: String
    /// A Debian version (`1.4.0`, `1.4.0-2`, `1:1.4.0~rc1`).
    public var version: String
    /// Debian's name for it (`amd64`, `arm64`, `armhf`).
    public var architecture: String
    public var size: Int
    public var sha256: String
    public var chunkSize: Int
    /// SHA-256 of each chunk, lower-case hex, in order.
    public var chunks: [String]
    /// Unix seconds.
    public var issuedAt: Double

    public init(package: String, version: String, architecture: String, size: Int, sha256: String, chunkSize: Int, chunks: [String], issuedAt: Double) {
        self.package = package
        self.version = version
        self.architecture = architecture
        self.size = size
        self.sha256 = sha256
        self.chunkSize = chunkSize
        self.chunks = chunks
        self.issuedAt = issuedAt
    }

    /// Whether the chunk list fits the size (a manifest that does not is refused, whatever signs it).
    public var isConsistent: Bool {
        chunkSize > 0 && size > 0 && chunks.count == (size + chunkSize - 1) / chunkSize
    }

    /// The byte count of chunk `index`.
    public func length(ofChunk index: Int) -> Int { min(chunkSize, size - index * chunkSize) }
}

/// The answer of `GET /api/v1/rider/release`: the release staged for this unit, or none.
public struct ReleaseReply: Codable, Sendable, Equatable {
    public var release: SignedRelease?
    public init(release: SignedRelease?) { self.release = release }
}

public enum UpdateAckStatus: String, Codable, Sendable, Equatable, CaseIterable {
    /// All of it arrived and matches: it waits for the unit's maintenance window.
    case downloaded = "DOWNLOADED"
    /// Installed, and the new version passed its health gate.
    case applied = "APPLIED"
    /// Not taken (`reason`): nothing was installed.
    case refused = "REFUSED"
    /// Installed, failed its health gate (`reason`), and the version before it is installed again.
    case rolledBack = "ROLLED_BACK"
}

/// `POST /api/v1/rider/release/acks`, sent with an `Idempotency-Key` header: a unit's answer to a release.
public struct UpdateAck: Codable, Sendable, Equatable {
    public var package: String
    public var version: String
    public var status: UpdateAckStatus
    public var reason: String?
    /// The version the unit runs after this answer.
    public var runningVersion: String
    /// Unix seconds.
    public var at: Double

    public init(package: String, version: String, status: UpdateAckStatus, reason: String?, runningVersion: String, at: Double) {
        self.package = package
        self.version = version
        self.status = status
        self.reason = reason
        self.runningVersion = runningVersion
        self.at = at
    }
}
