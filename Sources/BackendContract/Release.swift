import DriverDomain

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

    /// The byte count of chunk `index` (of a manifest without a `problem`: no arithmetic here can overflow then).
    public func length(ofChunk index: Int) -> Int { min(chunkSize, size - index * chunkSize) }

    /// The offset of chunk `index` in the package.
    public func offset(ofChunk index: Int) -> Int { index * chunkSize }
}

/// The rules a release must pass before a byte of it is fetched, written once: driverd applies them when the backend
/// offers a release, driverd-update again (as root, trusting nothing driverd wrote) before it installs. The signature
/// is checked by each before these (it needs the key). A signed document is still outside input (a buggy fleet tool,
/// a leaked key): every number is bounded before any arithmetic is done with it, so no manifest can trap.
public enum ReleaseRules {
    /// The largest package a unit takes: far above any of the fleet's (driverd's is 9 MB, the kiosk's 6.5 MB), far
    /// below where arithmetic on sizes and offsets could overflow.
    public static let maxSize = 1 << 30
    /// The largest chunk: one is held in memory while it is checked.
    public static let maxChunkSize = 64 << 20
    /// Debian allows longer versions; no real package has one, and a version is echoed in answers and logs.
    public static let maxVersionLength = 64
    public static let maxPackageLength = 64

    /// Why `manifest` cannot describe a package at all, or nil.
    public static func problem(of manifest: ReleaseManifest) -> String? {
        guard (1...maxPackageLength).contains(manifest.package.utf8.count),
              manifest.package.utf8.allSatisfy({ isLowerAlphanumeric($0) || "+-.".utf8.contains($0) })
        else { return "package \(quoted(manifest.package)) is not a Debian package name" }
        guard manifest.version.utf8.count <= maxVersionLength, DebianVersion(manifest.version) != nil else {
            return "version \(quoted(manifest.version)) is not a Debian version of at most \(maxVersionLength) characters"
        }
        guard (1...32).contains(manifest.architecture.utf8.count), manifest.architecture.utf8.allSatisfy({ isLowerAlphanumeric($0) || $0 == UInt8(ascii: "-") })
        else { return "architecture \(quoted(manifest.architecture)) is not a Debian architecture" }
        guard (1...maxSize).contains(manifest.size) else { return "size \(manifest.size): a package is 1 to \(maxSize) bytes" }
        guard (1...maxChunkSize).contains(manifest.chunkSize) else { return "chunk size \(manifest.chunkSize): 1 to \(maxChunkSize) bytes" }
        // Both bounded above: this cannot overflow.
        let expected = manifest.size / manifest.chunkSize + (manifest.size % manifest.chunkSize == 0 ? 0 : 1)
        guard manifest.chunks.count == expected else {
            return "the manifest's \(manifest.chunks.count) chunks do not add up to its size (\(expected) chunks of \(manifest.chunkSize) bytes)"
        }
        guard isSHA256(manifest.sha256), manifest.chunks.allSatisfy(isSHA256) else { return "a SHA-256 in the manifest is not 64 lower-case hex digits" }
        // A package of one chunk is that chunk: two different digests cannot both be its SHA-256.
        guard manifest.chunks.count != 1 || manifest.chunks[0] == manifest.sha256 else {
            return "the package's SHA-256 and its only chunk's differ: no file can match both"
        }
        return nil
    }

    /// Why `manifest` may not replace what is installed here (`installed`: dpkg's version and architecture of the
    /// package, nil when it is not installed), or nil. `problem(of:)` first.
    public static func refusal(of manifest: ReleaseManifest, installed: (version: String, architecture: String)?) -> String? {
        if let problem = problem(of: manifest) { return problem }
        guard let installed else { return "package \(manifest.package) is not installed on this unit" }
        guard manifest.architecture == installed.architecture || manifest.architecture == "all" else {
            return "architecture \(manifest.architecture): this unit's \(manifest.package) is \(installed.architecture)"
        }
        // `problem` parsed the version already.
        if let offered = DebianVersion(manifest.version), let running = DebianVersion(installed.version), offered <= running {
            return "version \(manifest.version) is not newer than the installed \(installed.version)"
        }
        return nil
    }

    /// An answer's version in an answer to the backend, a log line or a reason: at most `maxVersionLength`
    /// characters of what the backend sent (a longer one is refused for that, and named by its start).
    public static func quoted(_ text: String) -> String {
        text.count <= maxVersionLength ? text : String(text.prefix(maxVersionLength)) + "…"
    }

    private static func isLowerAlphanumeric(_ byte: UInt8) -> Bool { (48...57).contains(byte) || (97...122).contains(byte) }

    /// 64 lower-case hex digits.
    public static func isSHA256(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
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
    /// The SHA-256 of the package this answer is about (driverd-update's verdicts name it: a verdict is credited to
    /// the release it judged, never to one offered since). Absent in answers of older units.
    public var sha256: String?

    public init(package: String, version: String, status: UpdateAckStatus, reason: String?, runningVersion: String, at: Double, sha256: String? = nil) {
        self.package = package
        self.version = version
        self.status = status
        self.reason = reason
        self.runningVersion = runningVersion
        self.at = at
        self.sha256 = sha256
    }
}
