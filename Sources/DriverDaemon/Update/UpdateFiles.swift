import DriverAPI
import BackendContract
import Crypto
import DriverStore
import FoundationEssentials
import Logging
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
/// A file that cannot be written or removed is logged here; what the desk must weigh (storing a release) throws.
struct UpdateFiles: Sendable {
    let directory: String
    var logger = Logger(label: "update")

    var release: String { directory + "/release.json" }
    var part: String { directory + "/package.part" }
    var package: String { directory + "/package.deb" }
    var request: String { directory + "/request.json" }
    var outcome: String { directory + "/outcome.json" }
    var budget: String { directory + "/budget.json" }
    var givenUpList: String { directory + "/given-up.json" }

    /// Releases (SHA-256) driverd-update rolled back or refused: never taken again (unreadable: said, and none).
    func givenUp() -> Set<String> {
        do {
            guard let data = try DurableFile.contents(givenUpList) else { return [] }
            return Set(try Codec.decode([String].self, from: data))
        } catch {
            logger.error("the list of releases given up cannot be read (\(error)): a release rolled back before may be downloaded again")
            return []
        }
    }

    /// Writes the whole list (the desk keeps it in memory: nothing read back).
    func saveGivenUp(_ list: [String]) {
        do {
            try DurableFile.write(Data(try Codec.encode(list)), to: givenUpList)
        } catch {
            logger.error("cannot record the releases given up (one may be downloaded again after a restart): \(Store.describeWriteFailure(error))")
        }
    }

    func saveBudget(_ spent: DailyBudget) {
        do {
            try DurableFile.write(Data(Codec.encode(spent)), to: budget)
        } catch {
            logger.error("cannot record today's downloaded bytes: \(Store.describeWriteFailure(error))")
        }
    }

    /// A taken release's signed offer, its earlier files dropped, so a restart goes on with it.
    func store(_ offer: ReleaseOffer) throws {
        try DurableFile.remove(part)
        try DurableFile.remove(package)
        try DurableFile.write(Data(try Codec.encode(offer.signed)), to: release)
    }

    /// The release accepted before, as stored; nil when there is none (a file that does not decode is said and
    /// removed: the backend offers the release again).
    func storedOffer() -> ReleaseOffer? {
        do {
            guard let data = try DurableFile.contents(release) else { return nil }
            let offer = try ReleaseOffer(try Codec.decode(SignedRelease.self, from: data))
            // Written by this daemon after the rules passed; checked again all the same before any arithmetic.
            if let problem = ReleaseRules.problem(of: offer.manifest) { throw APIError(.invalidParams, problem) }
            return offer
        } catch {
            logger.error("the stored release cannot be read (\(error)): removed, the backend's offer is taken again")
            removeRelease()
            return nil
        }
    }

    /// driverd-update's verdict, if it left one (one that is not an answer is said and removed).
    func outcomeLeft() -> UpdateAck? {
        do {
            guard let data = try DurableFile.contents(outcome) else { return nil }
            return try Codec.decode(UpdateAck.self, from: data)
        } catch let error as DecodingError {
            logger.error("driverd-update's outcome file is not an answer (\(error)): removed")
            removeOutcome()
        } catch {
            logger.error("driverd-update's outcome file cannot be read: \(error)")
        }
        return nil
    }

    func removeOutcome() {
        do {
            try DurableFile.remove(outcome)
        } catch {
            logger.error("cannot remove driverd-update's outcome (it would be reported again): \(Store.describeWriteFailure(error))")
        }
    }

    /// Asks driverd-update to install the stored release: its signed offer, copied whole to the request file.
    func askInstall() throws {
        guard let signed = try DurableFile.contents(release) else { throw APIError(.internalError, "release.json is gone") }
        try DurableFile.write(signed, to: request)
    }

    /// Drops the release's files (not driverd-update's outcome, the day's budget nor the given-up list).
    func removeRelease() {
        for path in [request, package, part, release] {
            do {
                try DurableFile.remove(path)
            } catch {
                logger.error("cannot remove \(path): \(Store.describeWriteFailure(error))")
            }
        }
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

    /// The good chunks of `manifest` here (all of them when the package is kept whole); a partial download that cannot
    /// be read is said, and fetched again from the start.
    func chunksHere(of manifest: ReleaseManifest) -> (have: Int, complete: Bool) {
        if access(package, F_OK) == 0 { return (manifest.chunks.count, true) }
        do {
            return (try verifiedChunks(of: manifest), false)
        } catch {
            logger.warning("release \(manifest.version): the partial download cannot be read (\(error)): fetched again from the start")
            return (0, false)
        }
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
