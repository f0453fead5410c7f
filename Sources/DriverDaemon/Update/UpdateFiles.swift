import DriverAPI
import BackendContract
import Crypto
import DriverStore
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Where a release lives on its way in, under `<state>/update` (the daemon's; driverd-update reads it as root and
/// trusts none of it without checking the signature against /etc again):
/// - `release.json`: the signed manifest the daemon accepted, exactly as the backend sent it;
/// - `package.part`, then `package.deb` once every chunk and the whole file matched;
/// - `request.json`: the daemon asks driverd-update to install (driverd-update.path starts it);
/// - `outcome.json`: driverd-update's verdict (APPLIED or ROLLED_BACK), reported by whichever driverd runs next;
/// - `budget.json`: bytes downloaded on the day it names; `given-up.json`: releases never to take again.
struct UpdateFiles: Sendable {
    let directory: String

    var release: String { directory + "/release.json" }
    var part: String { directory + "/package.part" }
    var package: String { directory + "/package.deb" }
    var request: String { directory + "/request.json" }
    var outcome: String { directory + "/outcome.json" }
    var budget: String { directory + "/budget.json" }
    var givenUpList: String { directory + "/given-up.json" }

    /// Releases (SHA-256) driverd-update rolled back or refused: never taken again.
    func givenUp() throws -> [String] {
        guard let data = try DurableFile.contents(givenUpList) else { return [] }
        return try Codec.decode([String].self, from: data)
    }

    /// Writes the whole list (the desk keeps it in memory: nothing read back).
    func saveGivenUp(_ list: [String]) throws {
        try DurableFile.write(Data(try Codec.encode(list)), to: givenUpList)
    }

    /// Chunks of `manifest` already in `package.part`, each checked against its SHA-256; the file is cut after the
    /// last good one (a power cut may leave a torn tail).
    func verifiedChunks(of manifest: ReleaseManifest) throws -> Int {
        // No partial download yet: none of it here.
        guard let size = try DurableFile.sizeIfPresent(part) else { return 0 }
        var good = 0
        while good < manifest.chunks.count, good * manifest.chunkSize + manifest.length(ofChunk: good) <= size {
            let bytes = try DurableFile.read(part, offset: good * manifest.chunkSize, count: manifest.length(ofChunk: good))
            guard FleetSignature.sha256Hex(bytes) == manifest.chunks[good] else { break }
            good += 1
        }
        let keep = good == manifest.chunks.count ? manifest.size : good * manifest.chunkSize
        if size != keep { try DurableFile.truncate(part, to: keep) }
        return good
    }

    /// The whole file's SHA-256, read in pieces (a package is megabytes; the daemon's memory is not).
    static func sha256(ofFile path: String) throws -> String {
        var hasher = SHA256()
        var offset = 0
        while true {
            let piece = try DurableFile.read(path, offset: offset, count: 1 << 20)
            if piece.isEmpty { break }
            hasher.update(data: piece)
            offset += piece.count
        }
        return FleetSignature.hex(hasher.finalize())
    }

    /// Free bytes on the file system of `path` (nil: unknown).
    static func freeBytes(at path: String) -> Int? {
        var fs = statvfs()
        guard statvfs(path, &fs) == 0 else { return nil }
        return Int(fs.f_bavail) * Int(fs.f_frsize)
    }
}
