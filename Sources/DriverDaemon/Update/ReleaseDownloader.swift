import BackendClient
import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials

/// The download's I/O: one chunk of a release fetched at the lowest priority and written in place, or the reason it
/// waits; the whole file checked. What to fetch next, and what a result means, is `UpdateStateMachine`'s.
struct ReleaseDownloader: Sendable {
    let outbox: Outbox
    /// The backend's calls (none: no backend configured).
    let session: BackendSession?
    let files: UpdateFiles
    let budget: DownloadBudget
    let maxBytesPerDay: Int
    let clock: DaemonClock

    /// Free space a download leaves beside the reserve: the pings of an offline day and the driver's changes.
    static let storeMargin: Int64 = 16 << 20

    enum Chunk: Equatable {
        case stored
        /// The release was replaced while the chunk was on its way: not written into the next release's file.
        case stale
        /// Not now, and why (the download pauses).
        case waits(String)
    }

    /// Fetches chunk `index` of `manifest` when nothing else needs the link or the disk more, and writes it in place.
    func fetch(_ manifest: ReleaseManifest, chunk index: Int, stillCurrent: () -> Bool) async -> Chunk {
        guard let session else { return .waits("no backend is configured (backend.url)") }
        // Lowest priority: an SOS, a status or a proof waiting for the link goes first.
        let depth: Outbox.Depth
        do {
            depth = try outbox.depth()
        } catch {
            return .waits("the outbox cannot be read: \(error)")
        }
        if depth.sos + depth.transitions + depth.proofs > 0 { return .waits("an SOS, a status or a proof waits to be sent") }
        guard session.isOnline else { return .waits("the backend is not reachable") }
        let length = manifest.length(ofChunk: index)
        // Not fetched to be thrown away (the data plan): the chunk must fit beside the driver's reserve and a margin.
        let store = outbox.store.health.check()
        guard store.canSave, (store.freeBytes ?? .max) > Int64(length) + store.reserveBytes + Self.storeMargin else {
            return .waits("no room to store the release: storage \(store.summary)")
        }
        let today = DailyBudget.day(of: clock.now().time)
        guard budget.allows(length, day: today, max: maxBytesPerDay) else {
            return .waits("today's download budget (update.max_bytes_per_day = \(maxBytesPerDay)) is spent")
        }
        let bytes: Data
        do {
            bytes = try await session.authorized { client, token in try await client.releaseChunk(sha256: manifest.sha256, index: index, token: token) }
        } catch {
            return .waits("chunk \(index) not fetched: \(error)")
        }
        budget.spend(bytes.count, day: today)
        guard stillCurrent() else { return .stale }
        guard bytes.count == length, FleetSignature.sha256Hex(bytes) == manifest.chunks[index] else {
            return .waits("chunk \(index) did not match its SHA-256: fetched again later")
        }
        do {
            try DurableFile.write(bytes, to: files.part, at: manifest.offset(ofChunk: index))
        } catch {
            return .waits("cannot store chunk \(index): \(Store.describeWriteFailure(error))")
        }
        return .stored
    }

    /// Whether the whole file matches the manifest's SHA-256 (thrown: it cannot be read).
    func wholeMatches(_ manifest: ReleaseManifest) throws -> Bool {
        try UpdateFiles.sha256(ofFile: files.part) == manifest.sha256
    }
}
