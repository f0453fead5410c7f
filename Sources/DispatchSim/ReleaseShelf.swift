import BackendContract
import Crypto
import DispatchSimCore
import Foundation
import Synchronization

/// The packages the fleet published, by their SHA-256, served to units chunk by chunk; it counts the bytes it
/// served per package (what an update cost the link). In memory: a restarted sim has no releases.
final class ReleaseShelf: Sendable {
    struct Package: Sendable {
        var manifest: ReleaseManifest
        var bytes: [UInt8]
        var bytesServed = 0
        var chunksServed = 0
    }

    private let packages = Mutex<[String: Package]>([:])

    /// A package's manifest: its size and SHA-256, whole and per chunk.
    static func manifest(
        of bytes: [UInt8], package: String, version: String, architecture: String, chunkSize: Int, now: Double
    ) -> ReleaseManifest {
        let chunks = stride(from: 0, to: bytes.count, by: chunkSize).map { start in
            SHA256.hash(data: bytes[start..<min(start + chunkSize, bytes.count)]).hexString
        }
        return ReleaseManifest(
            package: package, version: version, architecture: architecture, size: bytes.count,
            sha256: SHA256.hash(data: bytes).hexString, chunkSize: chunkSize, chunks: chunks, issuedAt: now)
    }

    /// Keeps `bytes` (described truly by `manifest`), served under `key` (the SHA-256 the staged manifest names).
    func put(_ bytes: [UInt8], manifest: ReleaseManifest, as key: String) {
        packages.withLock { $0[key] = Package(manifest: manifest, bytes: bytes) }
    }

    /// Chunk `index` of the package `sha256` (nil: no such package or chunk), counted as served.
    func chunk(_ sha256: String, index: Int) -> [UInt8]? {
        packages.withLock { packages -> [UInt8]? in
            guard var package = packages[sha256], index >= 0, index < package.manifest.chunks.count else { return nil }
            let start = index * package.manifest.chunkSize
            let chunk = Array(package.bytes[start..<start + package.manifest.length(ofChunk: index)])
            package.bytesServed += chunk.count
            package.chunksServed += 1
            packages[sha256] = package
            return chunk
        }
    }

    var overview: [ReleaseServed] {
        packages.withLock { packages in
            packages.values.map { ReleaseServed(manifest: $0.manifest, bytesServed: $0.bytesServed, chunksServed: $0.chunksServed) }
                .sorted { $0.manifest.issuedAt < $1.manifest.issuedAt }
        }
    }
}

/// `GET /sim/releases`: the release key, each package with what it cost the link, what is staged where, the answers.
struct ReleaseOverview: Codable, Sendable {
    var publicKey: String
    var releases: [ReleaseServed]
    var staged: [String: String]
    var acks: [UpdateAckEntry]
}

struct ReleaseServed: Codable, Sendable {
    var manifest: ReleaseManifest
    var bytesServed: Int
    var chunksServed: Int
}
