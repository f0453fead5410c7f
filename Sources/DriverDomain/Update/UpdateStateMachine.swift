import DriverAPI

/// A release as the update desk's decisions see it: named by its SHA-256 (what driverd-update installs and judges),
/// never by its version alone, with its number of chunks.
public struct UpdateRelease: Sendable, Equatable, Hashable {
    public var sha256: String
    public var chunks: Int

    public init(sha256: String, chunks: Int) {
        self.sha256 = sha256
        self.chunks = chunks
    }
}

public enum UpdatePhase: Sendable, Equatable {
    case downloading, paused, downloaded, installing
}

/// The update desk's decisions, pure, and the only copy of its state: which release is current (with the offer it
/// came in, `Offer`: the runner's signed manifest), where its download stands and what it waits for, which offers
/// were refused, when a new offer is taken, where the installed version stands against it, which release a verdict of
/// driverd-update belongs to, and how soon the runner looks again. The desk (its runner) does what each action
/// names: files, the backend, the outbox.
///
/// offered → downloading ⇄ paused → downloaded → installing → verdict → (the next offer, if one waited)
public struct UpdateStateMachine<Offer: Sendable & Equatable>: Sendable, Equatable {
    public typealias Release = UpdateRelease
    public typealias Phase = UpdatePhase

    /// Seconds between rounds while a release is on its way in (a paused download, the window).
    public static var roundSeconds: Double { 30 }
    /// Seconds between looks for driverd-update's verdict while it installs, for the first `verdictWatchSeconds` after
    /// the ask (its health gate ends within minutes); then at the round's pace, so a verdict that never comes does not
    /// wake a parked unit every 2 s for good.
    public static var verdictSeconds: Double { 2 }
    public static var verdictWatchSeconds: Double { 600 }

    public private(set) var current: Release?
    /// The offer `current` came in.
    public private(set) var offer: Offer?
    public private(set) var chunksHave = 0
    public private(set) var phase = Phase.downloading
    /// An offer accepted while `current` was being installed: taken once `current`'s verdict is in.
    public private(set) var waiting: Release?
    private var waitingOffer: Offer?
    /// `current` was taken and its files are not stored yet (the runner alone touches the files, so a download of the
    /// release it replaces never writes into the new one's).
    public private(set) var needsStoring = false
    /// Releases driverd-update rolled back, and manifests no download can satisfy: never taken again.
    public private(set) var givenUp: Set<String>
    /// Offers refused by this process (by the runner's digest of the offer): not checked again. (The answer is queued
    /// once ever, whatever the process.)
    public private(set) var refused: Set<String> = []
    /// The release driverd-update's last verdict (applied or not) named, until the backend stops offering it.
    public private(set) var lastJudged: String?
    /// What the current release waits for (a pause's reason, the maintenance window's), for `update.status`.
    public private(set) var waitingFor: String?
    public private(set) var lastOutcome: UpdateOutcome?
    /// Until when (monotonic) driverd-update's verdict is looked for every `verdictSeconds`.
    public private(set) var watchVerdictUntil = -Double.infinity

    public init(givenUp: Set<String> = []) { self.givenUp = givenUp }

    /// Whether an offer of `release` is one this machine already holds an answer for: the one downloading or being
    /// installed (this very process may be it, started by the install), the one waiting, one given up, or the one just
    /// judged. The rules are not asked again about it: a release judged while dpkg still lists it, or the running
    /// release offered to itself, would otherwise be refused as "not newer than the installed", an answer the
    /// backend can only refuse (it has the verdict).
    public func knows(_ release: Release) -> Bool {
        release == current || release == waiting || givenUp.contains(release.sha256) || release.sha256 == lastJudged
    }

    /// Whether the offer with this digest, of `release`, is answered already (refused, or known): not checked again.
    public func answered(_ digest: String, _ release: Release) -> Bool { refused.contains(digest) || knows(release) }

    // MARK: Offers

    public enum OfferAction: Sendable, Equatable {
        /// Already current, waiting or given up: nothing to do.
        case ignore
        /// One is being installed: this one waits for its verdict (nothing fetched, no file touched).
        case wait
        /// Taken: the runner drops the previous release's files, stores this one (`needsStoring`) and downloads it from
        /// chunk 0. A download of the previous one stops at once (`isCurrent` turns false for it).
        case take(replacing: Release?)
    }

    /// The backend offers `release`, which passed the rules (signature, manifest, package, architecture, version).
    public mutating func offered(_ release: Release, offer: Offer) -> OfferAction {
        if knows(release) { return .ignore }
        if phase == .installing, current != nil {
            waiting = release
            waitingOffer = offer
            return .wait
        }
        let replaced = current
        start(release, offer: offer)
        return .take(replacing: replaced)
    }

    /// The offer with this digest was refused (its answer queued): not checked again by this process.
    public mutating func refusedOffer(_ digest: String, outcome: UpdateOutcome) {
        refused.insert(digest)
        lastOutcome = outcome
    }

    /// The current release's files are stored (`offer` is the one stored: a newer offer meanwhile still needs its own).
    public mutating func stored(_ offer: Offer) {
        if self.offer == offer { needsStoring = false }
    }

    // MARK: The installed version

    /// Where the installed version of a release's package stands against the release's own version.
    public enum Installed: Sendable, Equatable {
        /// Not installed, older, or a version that does not parse: the release is still to install.
        case older
        /// This release is what runs: this process may be its install's (driverd-update judges it).
        case same
        /// Something newer runs: nothing left to do with the release.
        case newer
    }

    public static func installed(_ installedVersion: String?, against version: String) -> Installed {
        guard let installedVersion, let running = DebianVersion(installedVersion), let offered = DebianVersion(version) else { return .older }
        return offered < running ? .newer : offered == running ? .same : .older
    }

    public enum ResumeAction: Sendable, Equatable {
        /// Something newer is installed: drop the release's files (keep driverd-update's outcome).
        case dropFiles
        /// Go on with it: the runner counts the good chunks on disk and reports them (`resumedDownload`).
        case countChunks
    }

    /// A release accepted by an earlier run, found on disk; `installAsked`: the request to driverd-update is there.
    public mutating func resume(_ release: Release, offer: Offer, installed: Installed, installAsked: Bool, now: Double) -> ResumeAction {
        if installed == .newer { return .dropFiles }
        current = release
        self.offer = offer
        needsStoring = false
        chunksHave = 0
        phase = installAsked || installed == .same ? .installing : .downloading
        if phase == .installing { watchVerdictUntil = now + Self.verdictWatchSeconds }
        return .countChunks
    }

    /// The resumed release's good chunks on disk (`complete`: the whole package is kept already).
    public mutating func resumedDownload(chunksHave: Int, complete: Bool) {
        guard let current else { return }
        self.chunksHave = complete ? current.chunks : min(max(0, chunksHave), current.chunks)
        if phase != .installing { phase = complete ? .downloaded : .downloading }
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
        waitingFor = nil
    }

    /// The current release waits for `reason` (a download paused, files that cannot be written). Returns whether the
    /// reason is new (worth a journal line).
    @discardableResult
    public mutating func paused(_ reason: String) -> Bool {
        if phase == .downloading, current != nil { phase = .paused }
        defer { waitingFor = reason }
        return waitingFor != reason
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
        waitingFor = nil
        if matches {
            phase = .downloaded
            return .keep
        }
        givenUp.insert(release.sha256)
        clear()
        return .refuse
    }

    // MARK: Installing

    public enum InstallAction: Sendable, Equatable {
        /// This release runs already (this process started from its install's postinst): its verdict follows.
        case verdictFollows
        /// Ask the maintenance window, then driverd-update.
        case askWindow
        case none
    }

    /// The downloaded release, with `installed` standing where it does against it.
    public mutating func readyToInstall(installed: Installed) -> InstallAction {
        guard current != nil, phase == .downloaded else { return .none }
        guard installed == .older else {
            phase = .installing
            return .verdictFollows
        }
        return .askWindow
    }

    /// The maintenance window said to wait, for `reason`.
    public mutating func windowWaits(_ reason: String) { waitingFor = reason }

    /// The runner asked driverd-update to install `current` at `now` (monotonic).
    public mutating func installAsked(now: Double) {
        guard current != nil, phase == .downloaded else { return }
        phase = .installing
        waitingFor = nil
        watchVerdictUntil = now + Self.verdictWatchSeconds
    }

    public struct VerdictAction: Sendable, Equatable {
        /// The release the verdict is credited to (answered to the backend under its SHA-256).
        public var release: String?
        /// Never to be taken again (a rollback or a refusal by driverd-update).
        public var giveUp: String?
        /// Drop the current release's files (it is done with, whatever the verdict).
        public var clearFiles: Bool
        /// An offer that waited for this verdict: now taken (its files to store, its download started).
        public var take: Release?
    }

    /// driverd-update's verdict on the release with `sha256` (nil: an older driverd-update that did not name it;
    /// then the current release, as it was the one asked for); `outcome` is what `update.status` shows of it.
    public mutating func verdict(sha256: String?, applied: Bool, outcome: UpdateOutcome? = nil) -> VerdictAction {
        let judged = sha256 ?? current?.sha256
        lastJudged = judged
        if let outcome { lastOutcome = outcome }
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
        if current == nil, let next = waiting, let nextOffer = waitingOffer {
            waiting = nil
            waitingOffer = nil
            if !givenUp.contains(next.sha256) {
                start(next, offer: nextOffer)
                action.take = next
            }
        }
        return action
    }

    // MARK: The runner's pace

    public enum Step: Sendable, Equatable {
        /// Nothing to do until the backend offers something.
        case idle
        /// A round again after `roundSeconds` (paused, or waiting for the window).
        case later
        /// driverd-update is installing: its verdict is looked for every `verdictSeconds` (a file's existence; the
        /// verdict reaches the backend seconds after the health gate, not a round later).
        case verdictSoon
        /// More to do now: a release taken (its files to store), a chunk fetched and more to come.
        case again
    }

    /// After a step at `now` (monotonic): at once while there is work, soon while driverd-update was asked recently,
    /// a round later while a release is on its way, else nothing until an offer.
    public func nextStep(now: Double) -> Step {
        // A release taken whose files could not be stored yet is paused, as a download that cannot go on: a round later.
        guard current != nil else { return .idle }
        switch phase {
        case .downloading: return .again
        case .paused, .downloaded: return .later
        case .installing: return now < watchVerdictUntil ? .verdictSoon : .later
        }
    }

    /// Seconds to wait after `step` (nil: until woken).
    public static func wait(after step: Step) -> Double? {
        switch step {
        case .idle: nil
        case .again: 0
        case .later: roundSeconds
        case .verdictSoon: verdictSeconds
        }
    }

    private mutating func start(_ release: Release, offer: Offer) {
        current = release
        self.offer = offer
        chunksHave = 0
        phase = .downloading
        needsStoring = true
        waitingFor = nil
    }

    private mutating func clear() {
        current = nil
        offer = nil
        chunksHave = 0
        phase = .downloading
        needsStoring = false
        waitingFor = nil
    }
}
