/// The update desk's decisions, pure: which release is current, where its download stands, when a new offer is
/// taken, and which release a verdict of driverd-update belongs to. The desk (its runner) does what each action
/// names: files, the backend, the outbox.
///
/// offered → downloading ⇄ paused → downloaded → installing → verdict → (the next offer, if one waited)
///
/// A release is named by its SHA-256 (what driverd-update installs and judges), never by its version alone.
public struct UpdateStateMachine: Sendable, Equatable {
    public struct Release: Sendable, Equatable, Hashable {
        public var sha256: String
        public var chunks: Int

        public init(sha256: String, chunks: Int) {
            self.sha256 = sha256
            self.chunks = chunks
        }
    }

    public enum Phase: Sendable, Equatable {
        case downloading, paused, downloaded, installing
    }

    public private(set) var current: Release?
    public private(set) var chunksHave = 0
    public private(set) var phase = Phase.downloading
    /// An offer accepted while `current` was being installed: taken once `current`'s verdict is in.
    public private(set) var waiting: Release?
    /// Releases driverd-update rolled back, and manifests no download can satisfy: never taken again.
    public private(set) var givenUp: Set<String>

    /// The release driverd-update's last verdict (applied or not) named, until the backend stops offering it.
    public private(set) var lastJudged: String?

    public init(givenUp: Set<String> = []) { self.givenUp = givenUp }

    /// Whether an offer of `release` is one this machine already holds an answer for: the one downloading or being
    /// installed (this very process may be it, started by the install), the one waiting, one given up, or the one just
    /// judged. The rules are not asked again about it: a release judged while dpkg still lists it, or the running
    /// release offered to itself, would otherwise be refused as "not newer than the installed", an answer the
    /// backend can only refuse (it has the verdict).
    public func knows(_ release: Release) -> Bool {
        release == current || release == waiting || givenUp.contains(release.sha256) || release.sha256 == lastJudged
    }

    // MARK: Offers

    public enum OfferAction: Sendable, Equatable {
        /// Already current, waiting or given up: nothing to do.
        case ignore
        /// One is being installed: this one waits for its verdict (nothing fetched, no file touched).
        case wait
        /// Taken: the runner drops the previous release's files, stores this one and downloads it from chunk 0.
        /// A download of the previous one stops at once (`isCurrent` turns false for it).
        case take(replacing: Release?)
    }

    /// The backend offers `release`, which passed the rules (signature, manifest, package, architecture, version).
    public mutating func offered(_ release: Release) -> OfferAction {
        if knows(release) { return .ignore }
        if phase == .installing, current != nil {
            waiting = release
            return .wait
        }
        let replaced = current
        start(release)
        return .take(replacing: replaced)
    }

    /// A release accepted by an earlier run, found on disk with `chunksHave` good chunks.
    public mutating func resumed(_ release: Release, chunksHave: Int, complete: Bool, installAsked: Bool) {
        current = release
        self.chunksHave = complete ? release.chunks : min(chunksHave, release.chunks)
        phase = installAsked ? .installing : complete ? .downloaded : .downloading
    }

    /// Whether a download of `release` may go on (a newer offer replaced it, or a verdict ended it, otherwise).
    public func isCurrent(_ release: Release) -> Bool { current == release && (phase == .downloading || phase == .paused) }

    // MARK: The download

    public enum DownloadAction: Sendable, Equatable {
        /// Fetch chunk `index`.
        case fetch(index: Int)
        /// Every chunk is here: check the whole file.
        case checkWhole
        /// Not downloading this release (any more).
        case stop
    }

    /// What the download of `release` does next.
    public func nextDownloadStep(_ release: Release) -> DownloadAction {
        guard isCurrent(release) else { return .stop }
        return chunksHave == release.chunks ? .checkWhole : .fetch(index: chunksHave)
    }

    /// Chunk `index` of `release` matched and is on disk.
    public mutating func chunkStored(_ release: Release, index: Int) {
        guard isCurrent(release), index == chunksHave else { return }
        chunksHave += 1
        phase = .downloading
    }

    public mutating func paused(_ release: Release) {
        if isCurrent(release) { phase = .paused }
    }

    public enum WholeAction: Sendable, Equatable {
        /// Keep the package and tell the backend it is DOWNLOADED.
        case keep
        /// Every chunk matched its SHA-256 and the whole did not: no download can ever satisfy this manifest. Refuse
        /// it once (REFUSED, with the reason), drop its files, never fetch it again (it joins `givenUp`).
        case refuse
        case stop
    }

    /// The whole file of `release` was checked against its SHA-256.
    public mutating func wholeChecked(_ release: Release, matches: Bool) -> WholeAction {
        guard isCurrent(release), chunksHave == release.chunks else { return .stop }
        if matches {
            phase = .downloaded
            return .keep
        }
        givenUp.insert(release.sha256)
        clear()
        return .refuse
    }

    // MARK: Installing

    /// The runner asked driverd-update to install `current`.
    public mutating func installAsked() {
        if current != nil, phase == .downloaded { phase = .installing }
    }

    /// The installed version is this release already (this process started from its postinst): its verdict follows.
    public mutating func foundInstalled() {
        if current != nil { phase = .installing }
    }

    public struct VerdictAction: Sendable, Equatable {
        /// The release the verdict is credited to (answered to the backend under its SHA-256).
        public var release: String?
        /// Never to be taken again (a rollback or a refusal by driverd-update).
        public var giveUp: String?
        /// Drop the current release's files (it is done with, whatever the verdict).
        public var clearFiles: Bool
        /// An offer that waited for this verdict: now taken (its files stored, its download started).
        public var take: Release?
    }

    /// driverd-update's verdict on the release with `sha256` (nil: an older driverd-update that did not name it;
    /// then the current release, as it was the one asked for).
    public mutating func verdict(sha256: String?, applied: Bool) -> VerdictAction {
        let judged = sha256 ?? current?.sha256
        lastJudged = judged
        var action = VerdictAction(release: judged, giveUp: nil, clearFiles: false, take: nil)
        if !applied, let judged {
            givenUp.insert(judged)
            action.giveUp = judged
        }
        // The verdict ends the current release only when it is the one judged.
        if current != nil, judged == nil || judged == current?.sha256 {
            clear()
            action.clearFiles = true
        }
        if current == nil, let next = waiting {
            waiting = nil
            if !givenUp.contains(next.sha256) {
                start(next)
                action.take = next
            }
        }
        return action
    }

    /// The installed version is newer than the current release: nothing left to do with it.
    public mutating func superseded() { clear() }

    private mutating func start(_ release: Release) {
        current = release
        chunksHave = 0
        phase = .downloading
    }

    private mutating func clear() {
        current = nil
        chunksHave = 0
        phase = .downloading
    }
}
