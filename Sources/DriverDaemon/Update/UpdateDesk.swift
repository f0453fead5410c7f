import BackendClient
import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials
import JSONRPC
import Logging
import ServiceLifecycle
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Takes the fleet's releases of the packages this unit has installed: fetches the staged one when the backend
/// says so (`UPDATE_AVAILABLE`) and whenever the link comes back; checks it (the release key's signature, a
/// package dpkg has installed, its architecture, a newer version, the disk space); downloads it chunk by chunk at
/// the lowest priority; and in a maintenance window asks driverd-update (root, a unit of its own) to install it.
/// It never installs anything itself. Every answer (REFUSED, DOWNLOADED, and driverd-update's APPLIED or
/// ROLLED_BACK) goes to the backend through the outbox.
///
/// A thin runner: `UpdateStateMachine` decides and holds the state; one serial loop (`run`) takes the checks asked
/// for, in order, between steps of at most one chunk, and does the I/O each decision names.
final class UpdateDesk: Sendable {
    struct Settings: Sendable {
        var mode: UpdateMode
        var publicKey: String
        var maxBytesPerDay: Int
        var window: MaintenanceWindow
        var directory: String
        var dpkgStatus = InstalledPackages.statusPath
        /// This daemon's package.
        var package = "driverd"
    }

    typealias Machine = UpdateStateMachine<ReleaseOffer>

    /// What the unit is doing right now, for the window's decision (tasks in progress, items queued, motion).
    /// Throws when the unit's state cannot be read: no install on a guess.
    typealias SituationReader = @Sendable () async throws -> MaintenanceWindow.Situation

    let settings: Settings
    let files: UpdateFiles
    let outbox: Outbox
    private let answers: UpdateAnswers
    /// The backend's calls (none: no backend configured).
    let session: BackendSession?
    let clock: DaemonClock
    let logger: Logger
    private let situation: SituationReader
    private let dpkgStatus: InstalledPackagesFile
    /// Held only to ask or tell the machine (`update.status` reads it from the RPC's threads), never across I/O.
    private let machine: Mutex<Machine>
    private let budget: DownloadBudget
    private let downloader: ReleaseDownloader
    private let checks = UpdateChecks()

    init(settings: Settings, outbox: Outbox, session: BackendSession?, clock: DaemonClock, situation: @escaping SituationReader, logger: Logger) {
        self.settings = settings
        files = UpdateFiles(directory: settings.directory, logger: logger)
        self.outbox = outbox
        answers = UpdateAnswers(outbox: outbox, logger: logger)
        self.session = session
        self.clock = clock
        self.situation = situation
        dpkgStatus = InstalledPackagesFile(path: settings.dpkgStatus, logger: logger)
        self.logger = logger
        budget = DownloadBudget(files: files)
        downloader = ReleaseDownloader(
            outbox: outbox, session: session, files: files, budget: budget, maxBytesPerDay: settings.maxBytesPerDay, clock: clock)
        machine = Mutex(Machine(givenUp: files.givenUp()))
    }

    /// What is staged now, fetched at the loop's next turn.
    func requestCheck() { checks.ask() }

    /// The unit's situation changed in a way the maintenance window weighs (the shift began or ended): a round now,
    /// not at the next timer.
    func situationChanged() { checks.wake() }

    /// `update.check`: fetches what is staged now (as a push would), and answers once that is done.
    func checkNow() async throws -> UpdateStatus {
        try await checks.askAndWait()
        return status()
    }

    var installed: InstalledPackages { dpkgStatus.current }

    /// Where the installed version of `manifest`'s package stands against the manifest's.
    private func installedState(_ manifest: ReleaseManifest) -> Machine.Installed {
        Machine.installed(installed.packages[manifest.package]?.version, against: manifest.version)
    }

    // MARK: The loop

    func run() async {
        // No fetch at start: the uplink's first success (its `linkRestored`) asks, once it holds a valid token; a
        // fetch racing its first refresh could spend the refresh token it is about to use.
        resume()
        var wakes = checks.wakes.makeAsyncIterator()
        while !Task.isCancelled {
            let (asked, waiters) = checks.take()
            if asked {
                do {
                    try await check()
                    for waiter in waiters { waiter.resume() }
                } catch {
                    for waiter in waiters { waiter.resume(throwing: error) }
                }
            }
            let step = await step()
            if step == .again { continue }
            // The timer or an earlier wake, whichever comes first (a stale timer's wake costs one step).
            let timer = Machine.wait(after: step).map { seconds in
                Task { [clock, checks] in
                    try await clock.sleep(for: seconds)
                    checks.wake()
                }
            }
            let woken = await wakes.next() != nil
            timer?.cancel()
            guard woken else { break }
        }
        budget.save()
        checks.close()
    }

    /// One step on the accepted release: its files stored, one chunk, the whole checked, or the window asked. With
    /// `resume` and `reportOutcome`, the only code that touches the release's files, all on the loop.
    private func step() async -> Machine.Step {
        // driverd-update's verdict, whatever this process thought: it may have started in the middle of the install.
        if access(files.outcome, F_OK) == 0 { reportOutcome() }
        let (offer, needsStoring, phase) = machine.withLock { ($0.offer, $0.needsStoring, $0.phase) }
        if let offer {
            if needsStoring {
                store(offer)
            } else if phase == .downloading || phase == .paused {
                await downloadStep(offer)
            } else if phase == .downloaded {
                await considerInstalling(offer)
            }
        }
        return machine.withLock { $0.nextStep(now: clock.monotonic) }
    }

    // MARK: The release

    /// Fetches what is staged for this unit and takes it when it may run here. Throws when the backend was not
    /// reached; a release refused or ignored is an answer, not an error.
    func check() async throws {
        guard let offer = try await ReleaseOffer.staged(session: session, logger: logger) else { return }
        let manifest = offer.manifest
        // Answered already (refused), or one the machine holds: the one installing or just judged is no new offer.
        if machine.withLock({ $0.answered(offer.digest, offer.release) }) { return }
        let installed = installed.packages[manifest.package].map { (version: $0.version, architecture: $0.architecture) }
        let free = UpdateFiles.freeBytes(at: DurableFile.directory(of: files.directory))
        if let reason = offer.refusal(mode: settings.mode, publicKey: settings.publicKey, installed: installed, freeBytes: free) {
            return refuse(offer, reason: reason)
        }
        switch machine.withLock({ $0.offered(offer.release, offer: offer) }) {
        case .ignore:
            return
        case .wait:
            logger.notice("release \(manifest.package) \(manifest.version) accepted: taken once the release being installed has its verdict")
        case .take(let replaced):
            logger.notice("release \(manifest.package) \(manifest.version) accepted (\(manifest.size) bytes)\(replaced != nil ? ", replacing the one before" : ""): downloading at low priority")
        }
    }

    private func refuse(_ offer: ReleaseOffer, reason: String) {
        let manifest = offer.manifest
        logger.warning("release \(ReleaseRules.quoted(manifest.package)) \(ReleaseRules.quoted(manifest.version)) refused: \(reason)")
        let at = clock.now().time
        answers.queue(UpdateAck(
            package: manifest.package, version: manifest.version, status: .refused, reason: reason, runningVersion: DaemonVersion.current,
            at: at, sha256: manifest.sha256), key: offer.digest)
        let outcome = UpdateOutcome(
            package: ReleaseRules.quoted(manifest.package), version: ReleaseRules.quoted(manifest.version), status: .refused, reason: reason, at: at)
        machine.withLock { $0.refusedOffer(offer.digest, outcome: outcome) }
    }

    /// The taken release's signed offer on disk (its earlier files dropped), so a restart goes on with it.
    private func store(_ offer: ReleaseOffer) {
        do {
            try files.store(offer)
        } catch {
            return pause("cannot store release \(offer.manifest.version): \(Store.describeWriteFailure(error))")
        }
        machine.withLock { $0.stored(offer) }
    }

    // MARK: Resuming

    /// What a previous run left: driverd-update's verdict to report, a release to go on with.
    private func resume() {
        if let offer = files.storedOffer() {
            let manifest = offer.manifest
            let asked = access(files.request, F_OK) == 0
            let action = machine.withLock {
                $0.resume(offer.release, offer: offer, installed: installedState(manifest), installAsked: asked, now: clock.monotonic)
            }
            switch action {
            case .dropFiles:
                files.removeRelease()
            case .countChunks:
                let (have, complete) = files.chunksHere(of: manifest)
                let installing = machine.withLock { machine in
                    machine.resumedDownload(chunksHave: have, complete: complete)
                    return machine.phase == .installing
                }
                logger.info("release \(manifest.package) \(manifest.version): \(complete ? manifest.chunks.count : have) of \(manifest.chunks.count) chunks here\(installing ? ", install asked" : "")")
            }
        }
        reportOutcome()
    }

    /// driverd-update's verdict, when it left one: reported once, credited to the release it names (its SHA-256), then
    /// that release's files go and an offer that waited for it is taken.
    private func reportOutcome() {
        guard let ack = files.outcomeLeft() else { return }
        let outcome = UpdateOutcome(
            package: ack.package, version: ack.version, status: UpdateOutcome.Status(rawValue: ack.status.rawValue) ?? .refused, reason: ack.reason,
            at: ack.at)
        let action = machine.withLock { $0.verdict(sha256: ack.sha256, applied: ack.status == .applied, outcome: outcome) }
        answers.queue(ack, key: action.release ?? "installer")
        if action.giveUp != nil { files.saveGivenUp(machine.withLock { $0.givenUp.sorted() }) }
        if ack.status == .applied {
            logger.notice("release \(ack.package) \(ack.version) applied: it passed its health gate")
        } else {
            logger.warning("release \(ack.package) \(ack.version) \(ack.status.rawValue): \(ack.reason ?? "")")
        }
        files.removeOutcome()
        // Only when the verdict is the current release's (the machine says so).
        if action.clearFiles { files.removeRelease() }
        if let next = action.take { logger.notice("release \(next.sha256.prefix(12)), offered during the install, taken now") }
    }

    // MARK: Download

    private func pause(_ reason: String) {
        if machine.withLock({ $0.paused(reason) }) { logger.info("release download paused: \(reason)") }
        budget.save()
    }

    /// One chunk of `offer`'s release, or the whole file checked once every chunk is here.
    private func downloadStep(_ offer: ReleaseOffer) async {
        let release = offer.release
        switch machine.withLock({ $0.nextDownloadStep(release) }) {
        case .stop:
            return
        case .checkWhole:
            return await finishDownload(offer)
        case .fetch(let index):
            switch await downloader.fetch(offer.manifest, chunk: index, stillCurrent: { machine.withLock { $0.isCurrent(release) } }) {
            case .stored: machine.withLock { $0.chunkStored(release, index: index) }
            case .stale: return
            case .waits(let reason): pause(reason)
            }
        }
    }

    private func finishDownload(_ offer: ReleaseOffer) async {
        budget.save()
        let manifest = offer.manifest
        let matches: Bool
        do {
            matches = try downloader.wholeMatches(manifest)
        } catch {
            return pause("cannot read the package: \(Store.describeWriteFailure(error))")
        }
        switch machine.withLock({ $0.wholeChecked(offer.release, matches: matches) }) {
        case .stop:
            return
        case .refuse:
            // Every chunk matched its own SHA-256: the same bytes come every time, so no download can satisfy it.
            files.saveGivenUp(machine.withLock { $0.givenUp.sorted() })
            files.removeRelease()
            refuse(offer, reason: "every chunk matched its SHA-256 and the whole package did not match the manifest's: no download can satisfy this manifest")
        case .keep:
            do {
                try DurableFile.rename(files.part, to: files.package)
            } catch {
                return pause("cannot keep the package: \(Store.describeWriteFailure(error))")
            }
            logger.notice("release \(manifest.package) \(manifest.version) downloaded (\(manifest.size) bytes, SHA-256 matches)")
            answers.queue(UpdateAck(
                package: manifest.package, version: manifest.version, status: .downloaded, reason: nil, runningVersion: DaemonVersion.current,
                at: clock.now().time, sha256: manifest.sha256), key: manifest.sha256)
            // Straight on to the window.
            await considerInstalling(offer)
        }
    }

    // MARK: Installing

    private func considerInstalling(_ offer: ReleaseOffer) async {
        let manifest = offer.manifest
        // Installed already (this process started from that install's postinst): the verdict follows.
        guard machine.withLock({ $0.readyToInstall(installed: installedState(manifest)) }) == .askWindow else { return }
        let decision: MaintenanceWindow.Decision
        do {
            decision = settings.window.decide(try await situation())
        } catch {
            logger.error("cannot tell whether the unit is quiet, so no install yet: \(Store.describeWriteFailure(error))")
            return
        }
        guard decision == .install else {
            if case .wait(let reason) = decision { machine.withLock { $0.windowWaits(reason) } }
            return
        }
        do {
            try files.askInstall()
        } catch {
            logger.error("cannot ask for the install: \(Store.describeWriteFailure(error))")
            return
        }
        machine.withLock { $0.installAsked(now: clock.monotonic) }
        logger.notice("maintenance window: asking driverd-update to install \(manifest.package) \(manifest.version)")
    }

    // MARK: Status

    func status() -> UpdateStatus {
        let installed = installed.packages[settings.package]
        let today = DailyBudget.day(of: clock.now().time)
        let bytesToday = budget.spent(day: today)
        return machine.withLock { machine in
            UpdateStatus(
                mode: settings.mode, package: settings.package, installedVersion: installed?.version ?? DaemonVersion.current,
                release: machine.offer?.progress(chunksHave: machine.chunksHave, phase: machine.phase, waitingFor: machine.waitingFor),
                window: settings.window.description, bytesToday: bytesToday, maxBytesPerDay: settings.maxBytesPerDay,
                lastOutcome: machine.lastOutcome)
        }
    }
}

/// The desk owns the release lane (its answers to the fleet's releases), and hears when the fleet may have a new
/// release: an `UPDATE_AVAILABLE` push, or the link coming back.
extension UpdateDesk: MethodOwner {
    /// `update.status` and `update.check`.
    func register(in router: inout RPCRouter) {
        router.register(Methods.updateStatus) { _, _ in self.status() }
        router.register(Methods.updateCheck) { _, _ in try await self.checkNow() }
    }
}

extension UpdateDesk {
    func attach(to uplink: Uplink) {
        uplink.register(.updateAck, .posting(to: BackendPaths.releaseAcks))
        // The link back: what is staged now, and a download paused while the backend was away goes on at once
        // rather than at the next round (a restart mid-download used to wait up to `roundSeconds` for it).
        uplink.subscribe(UplinkSubscription(
            pushes: [.updateAvailable], pushed: { [self] _ in requestCheck() },
            linkRestored: { [self] in
                requestCheck()
                situationChanged()
            }))
    }
}

struct UpdateService: Service {
    let desk: UpdateDesk

    func run() async {
        await cancelWhenGracefulShutdown { await desk.run() }
    }
}
