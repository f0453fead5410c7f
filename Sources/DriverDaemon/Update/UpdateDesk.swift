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

    /// What the unit is doing right now, for the window's decision (tasks in progress, items queued, motion).
    /// Throws when the unit's state cannot be read: no install on a guess.
    typealias SituationReader = @Sendable () async throws -> MaintenanceWindow.Situation

    private struct State {
        /// The decisions (which release, how far, what waits, what was given up).
        var machine = UpdateStateMachine()
        /// The current release's manifest and its offer's digest (what its answers are keyed by).
        var manifest: ReleaseManifest?
        var offer = ""
        /// A release taken whose files the worker has not stored yet (the worker alone touches the files, so a
        /// download of the release it replaces never writes into the new one's).
        var toStore: (signed: SignedRelease, manifest: ReleaseManifest, offer: String)?
        /// An offer that waits for the verdict on the release being installed.
        var waiting: (signed: SignedRelease, manifest: ReleaseManifest, offer: String)?
        var waitingFor: String?
        var lastOutcome: UpdateOutcome?
        /// Offers refused by this process (by the digest of the manifest and its signature): not checked again. (The
        /// answer is queued once ever, whatever the process.)
        var refused: Set<String> = []
        /// Until when (monotonic) driverd-update's verdict is looked for every `verdictSeconds`: for a while after the
        /// ask (or this process's start during an install), then at the round's pace, so a verdict that never comes
        /// does not wake a parked unit every 2 s for good.
        var watchVerdictUntil = 0.0
    }

    let settings: Settings
    let files: UpdateFiles
    let outbox: Outbox
    /// The backend's calls (none: no backend configured).
    let session: BackendSession?
    let clock: DaemonClock
    let logger: Logger
    private let situation: SituationReader
    private let dpkgStatus: InstalledPackagesFile
    private let state = Mutex(State())
    private let budget: Mutex<DailyBudget>
    /// Checks to make, one at a time (a push, a reconnection and `update.check` may come together); a caller that
    /// waits for its check's end (`update.check`) hands its continuation along.
    private let requests: AsyncStream<CheckedContinuation<Void, any Error>?>
    private let continuation: AsyncStream<CheckedContinuation<Void, any Error>?>.Continuation
    /// Wakes the worker for a round now: a release accepted, the shift's end (the window may have opened), a round's
    /// timer.
    private let wakes: AsyncStream<Void>
    private let wakesContinuation: AsyncStream<Void>.Continuation

    init(settings: Settings, outbox: Outbox, session: BackendSession?, clock: DaemonClock, situation: @escaping SituationReader, logger: Logger) {
        self.settings = settings
        files = UpdateFiles(directory: settings.directory)
        self.outbox = outbox
        self.session = session
        self.clock = clock
        self.situation = situation
        dpkgStatus = InstalledPackagesFile(path: settings.dpkgStatus, logger: logger)
        self.logger = logger
        // Unreadable: a fresh budget for today (logged); the file is written whole again at the next chunk.
        budget = Mutex(logger.valueOrLog("reading the day's download budget") { try DailyBudget.read(UpdateFiles(directory: settings.directory).budget) } ?? DailyBudget())
        var givenUp: Set<String> = []
        do {
            givenUp = Set(try UpdateFiles(directory: settings.directory).givenUp())
        } catch {
            logger.error("the list of releases given up cannot be read (\(error)): a release rolled back before may be downloaded again")
        }
        state.withLock { $0.machine = UpdateStateMachine(givenUp: givenUp) }
        (requests, continuation) = AsyncStream.makeStream(of: CheckedContinuation<Void, any Error>?.self)
        (wakes, wakesContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func requestCheck() { continuation.yield(nil) }

    /// The unit's situation changed in a way the maintenance window weighs (the shift began or ended): a round now,
    /// not at the next timer.
    func situationChanged() { wakesContinuation.yield() }

    /// `update.check`: fetches what is staged now (as a push would), and answers once that is done.
    func checkNow() async throws -> UpdateStatus {
        try await withCheckedThrowingContinuation { waiter in
            if case .terminated = continuation.yield(waiter) { waiter.resume(throwing: APIError(.unavailable, "driverd is stopping")) }
        }
        return status()
    }

    func finish() {
        continuation.finish()
        wakesContinuation.finish()
    }

    var installed: InstalledPackages { dpkgStatus.current }

    // MARK: The release

    /// Fetches what is staged for this unit and takes it when it may run here. Throws when the backend was not
    /// reached; a release refused or ignored is an answer, not an error.
    func check() async throws {
        guard let session else { throw APIError(.unavailable, "no backend is configured (backend.url)") }
        let reply: ReleaseReply
        do {
            reply = try await session.authorized { client, token in try await client.release(token: token) }
        } catch {
            logger.info("release not fetched: \(error)")
            throw APIError(.unavailable, "the backend was not reached: \(error)")
        }
        guard let signed = reply.release else { return }
        let manifest: ReleaseManifest
        do {
            guard let payload = Data(base64Encoded: signed.payload) else { throw APIError(.invalidParams, "the payload is not base64") }
            manifest = try Codec.decode(ReleaseManifest.self, from: payload)
        } catch {
            logger.error("the backend's release is not base64 of a manifest's JSON: ignored (\(error))")
            return
        }
        let offer = Self.offerDigest(signed)
        let release = UpdateStateMachine.Release(sha256: manifest.sha256, chunks: manifest.chunks.count)
        // Answered already (refused), or one the machine holds: the one installing or just judged is no new offer.
        if state.withLock({ $0.refused.contains(offer) || $0.machine.knows(release) }) { return }
        if let reason = refusal(manifest, signed: signed) {
            refuse(manifest, offer: offer, reason: reason)
            return
        }
        let action = state.withLock { state -> UpdateStateMachine.OfferAction in
            let action = state.machine.offered(release)
            switch action {
            case .ignore: break
            case .wait: state.waiting = (signed, manifest, offer)
            case .take:
                state.manifest = manifest
                state.offer = offer
                state.toStore = (signed, manifest, offer)
                state.waitingFor = nil
            }
            return action
        }
        switch action {
        case .ignore:
            return
        case .wait:
            logger.notice("release \(manifest.package) \(manifest.version) accepted: taken once the release being installed has its verdict")
        case .take(let replaced):
            logger.notice("release \(manifest.package) \(manifest.version) accepted (\(manifest.size) bytes)\(replaced != nil ? ", replacing the one before" : ""): downloading at low priority")
            wakesContinuation.yield()
        }
    }

    /// What identifies an offer: its manifest and signature as sent.
    static func offerDigest(_ signed: SignedRelease) -> String {
        FleetSignature.sha256Hex(Data(signed.payload.utf8) + Data((signed.signature ?? "").utf8))
    }

    /// Why `manifest` may not be installed here, or nil: the signature, then the rules driverd-update applies again
    /// (`ReleaseRules`), then the disk space.
    private func refusal(_ manifest: ReleaseManifest, signed: SignedRelease) -> String? {
        if settings.mode == .external {
            return "this unit's image is updated externally (update.mode = external): it runs \(DaemonVersion.current)"
        }
        guard !settings.publicKey.isEmpty else { return "this unit has no update.public_key: it takes no release" }
        guard let signature = signed.signature, !signature.isEmpty, let payload = Data(base64Encoded: signed.payload) else {
            return "unsigned: a release must carry the fleet's Ed25519 signature"
        }
        guard FleetSignature.isValid(signature, of: payload, publicKey: settings.publicKey) else {
            return "bad signature: not made by the release key this unit trusts (update.public_key)"
        }
        let installed = installed.packages[manifest.package].map { (version: $0.version, architecture: $0.architecture) }
        if let reason = ReleaseRules.refusal(of: manifest, installed: installed) { return reason }
        // Room for the download and for driverd-update's copy of it, with a margin for the database (the rules bound
        // the size: no overflow).
        let needed = 2 * manifest.size + Self.spareBytes
        if let free = UpdateFiles.freeBytes(at: DurableFile.directory(of: files.directory)), free < needed {
            return "not enough disk space: needs \(needed >> 20) MiB, \(free >> 20) MiB free"
        }
        return nil
    }

    /// Left free for the outbox beside a release.
    static let spareBytes = 32 << 20

    private func refuse(_ manifest: ReleaseManifest, offer: String, reason: String) {
        logger.warning("release \(ReleaseRules.quoted(manifest.package)) \(ReleaseRules.quoted(manifest.version)) refused: \(reason)")
        let at = clock.now().time
        answer(UpdateAck(
            package: manifest.package, version: manifest.version, status: .refused, reason: reason, runningVersion: DaemonVersion.current,
            at: at, sha256: manifest.sha256), key: offer)
        state.withLock {
            $0.refused.insert(offer)
            $0.lastOutcome = UpdateOutcome(
                package: ReleaseRules.quoted(manifest.package), version: ReleaseRules.quoted(manifest.version), status: .refused, reason: reason, at: at)
        }
    }

    /// Queues an answer to the backend (durably, once per key ever). Its key names the release and the answer by a
    /// digest, so a repeat is one, and it stays within the contract's 128 characters whatever the version.
    private func answer(_ ack: UpdateAck, key: String) {
        var ack = ack
        // The backend's own words come back to it, bounded (a refused manifest may carry anything).
        ack.package = ReleaseRules.quoted(ack.package)
        ack.version = ReleaseRules.quoted(ack.version)
        if ack.sha256.map({ $0.utf8.count != 64 }) == true { ack.sha256 = nil }
        let digest = FleetSignature.sha256Hex(Data("\(ack.package)\n\(ack.version)\n\(key)".utf8)).prefix(32)
        do {
            // Once ever: a refused release the backend offers again after a restart gets no second answer, whose new
            // time under the same key the backend would refuse for good.
            let queued = try outbox.enqueueAnswerOnce(OutboxItemRecord(
                kind: .updateAck, taskId: TaskRecord.updateLane,
                idempotencyKey: "update-\(ack.status.rawValue.lowercased())-\(digest)",
                payload: Data(try Codec.encode(ack)), createdAt: ack.at))
            if !queued { logger.info("release \(ack.version): answered \(ack.status.rawValue) before; the backend has that answer") }
        } catch {
            logger.error("cannot queue the answer to release \(ack.version): \(Store.describeWriteFailure(error))")
        }
    }

    // MARK: Resuming

    /// What a previous run left: driverd-update's verdict to report, a release to go on with.
    func resume() {
        if let (signed, manifest) = storedRelease() {
            let release = UpdateStateMachine.Release(sha256: manifest.sha256, chunks: manifest.chunks.count)
            // What runs now may be newer than that release: nothing left to do. When it is that release, driverd-update
            // is judging it (its verdict follows).
            var requested = access(files.request, F_OK) == 0
            var superseded = false
            if let installed = installed.packages[manifest.package], let running = DebianVersion(installed.version),
               let offered = DebianVersion(manifest.version), offered <= running {
                if offered == running { requested = true } else { superseded = true }
            }
            if superseded {
                removeFiles(keepingOutcome: true)
            } else {
                let complete = access(files.package, F_OK) == 0
                var have = 0
                if !complete {
                    do {
                        have = try files.verifiedChunks(of: manifest)
                    } catch {
                        logger.warning("release \(manifest.version): the partial download cannot be read (\(error)): fetched again from the start")
                    }
                }
                state.withLock {
                    $0.machine.resumed(release, chunksHave: have, complete: complete, installAsked: requested)
                    if requested { $0.watchVerdictUntil = clock.monotonic + Self.verdictWatchSeconds }
                    $0.manifest = manifest
                    $0.offer = Self.offerDigest(signed)
                }
                logger.info("release \(manifest.package) \(manifest.version): \(complete ? manifest.chunks.count : have) of \(manifest.chunks.count) chunks here\(requested ? ", install asked" : "")")
            }
        }
        reportOutcome()
    }

    /// The release accepted before, as stored; nil when there is none (a file that does not decode is said and
    /// removed: the backend offers the release again).
    private func storedRelease() -> (SignedRelease, ReleaseManifest)? {
        do {
            guard let data = try DurableFile.contents(files.release) else { return nil }
            let signed = try Codec.decode(SignedRelease.self, from: data)
            guard let payload = Data(base64Encoded: signed.payload) else { throw APIError(.invalidParams, "its payload is not base64") }
            let manifest = try Codec.decode(ReleaseManifest.self, from: payload)
            // Written by this daemon after the rules passed; checked again all the same before any arithmetic.
            if let problem = ReleaseRules.problem(of: manifest) { throw APIError(.invalidParams, problem) }
            return (signed, manifest)
        } catch {
            logger.error("the stored release cannot be read (\(error)): removed, the backend's offer is taken again")
            removeFiles(keepingOutcome: true)
            return nil
        }
    }

    /// driverd-update's verdict, when it left one: reported once, credited to the release it names (its SHA-256), then
    /// that release's files go and an offer that waited for it is taken.
    func reportOutcome() {
        let data: Data
        do {
            guard let contents = try DurableFile.contents(files.outcome) else { return }
            data = contents
        } catch {
            logger.error("driverd-update's outcome file cannot be read: \(error)")
            return
        }
        let ack: UpdateAck
        do {
            ack = try Codec.decode(UpdateAck.self, from: data)
        } catch {
            logger.error("driverd-update's outcome file is not an answer (\(error)): removed")
            removeOutcome()
            return
        }
        let action = state.withLock { $0.machine.verdict(sha256: ack.sha256, applied: ack.status == .applied) }
        answer(ack, key: action.release ?? "installer")
        if action.giveUp != nil { saveGivenUp() }
        let status = UpdateOutcome.Status(rawValue: ack.status.rawValue) ?? .refused
        state.withLock { $0.lastOutcome = UpdateOutcome(package: ack.package, version: ack.version, status: status, reason: ack.reason, at: ack.at) }
        if ack.status == .applied {
            logger.notice("release \(ack.package) \(ack.version) applied: it passed its health gate")
        } else {
            logger.warning("release \(ack.package) \(ack.version) \(ack.status.rawValue): \(ack.reason ?? "")")
        }
        removeOutcome()
        // Only when the verdict is the current release's (the machine says so).
        if action.clearFiles {
            removeFiles(keepingOutcome: true)
            state.withLock { $0.manifest = nil }
        }
        if let next = action.take {
            state.withLock { state in
                guard let waiting = state.waiting, waiting.manifest.sha256 == next.sha256 else { return }
                state.manifest = waiting.manifest
                state.offer = waiting.offer
                state.toStore = waiting
                state.waiting = nil
            }
            logger.notice("release \(next.sha256.prefix(12)), offered during the install, taken now")
            wakesContinuation.yield()
        }
    }

    /// The machine's list of releases never to take again, kept across restarts.
    private func saveGivenUp() {
        let list = state.withLock { $0.machine.givenUp.sorted() }
        do {
            try files.saveGivenUp(list)
        } catch {
            logger.error("cannot record the releases given up (one may be downloaded again after a restart): \(Store.describeWriteFailure(error))")
        }
    }

    private func removeOutcome() {
        do {
            try DurableFile.remove(files.outcome)
        } catch {
            logger.error("cannot remove driverd-update's outcome (it would be reported again): \(Store.describeWriteFailure(error))")
        }
    }

    /// Drops the release's files (not the day's budget nor the given-up list).
    private func removeFiles(keepingOutcome: Bool) {
        for path in [files.request, files.package, files.part, files.release] + (keepingOutcome ? [] : [files.outcome]) {
            do {
                try DurableFile.remove(path)
            } catch {
                logger.error("cannot remove \(path): \(Store.describeWriteFailure(error))")
            }
        }
    }

    // MARK: Download

    enum Step: Equatable {
        /// Nothing to do until the backend offers something.
        case idle
        /// Try again after a while (paused, or waiting for the window).
        case later
        /// driverd-update is installing: its verdict is looked for every `verdictSeconds` (a file's existence; the
        /// verdict reaches the backend seconds after the health gate, not a round later).
        case verdictSoon
        /// A release was taken while this round ran (it replaced the one downloading): the next round starts now.
        case again
    }

    /// One round of work on the accepted release. The only code that touches the release's files (besides
    /// `resume` and `reportOutcome`, which run on the same task).
    func work() async -> Step {
        // driverd-update's verdict, whatever this process thought: it may have started in the middle of the install.
        if access(files.outcome, F_OK) == 0 { reportOutcome() }
        if let toStore = state.withLock({ $0.toStore }) {
            do {
                try DurableFile.remove(files.part)
                try DurableFile.remove(files.package)
                try DurableFile.write(Data(try Codec.encode(toStore.signed)), to: files.release)
            } catch {
                pause("cannot store release \(toStore.manifest.version): \(Store.describeWriteFailure(error))")
                return .later
            }
            state.withLock { if $0.toStore?.offer == toStore.offer { $0.toStore = nil } }
        }
        guard let manifest = state.withLock({ $0.manifest }) else { return .idle }
        switch state.withLock({ $0.machine.phase }) {
        case .downloading, .paused:
            await download(manifest)
            // Straight on to the window when the last chunk came.
            if state.withLock({ $0.machine.phase }) == .downloaded { await considerInstalling(manifest) }
            return nextStep()
        case .downloaded:
            await considerInstalling(manifest)
            return nextStep()
        case .installing:
            return nextStep()
        }
    }

    private func nextStep() -> Step {
        state.withLock {
            Self.nextStep(
                releaseTaken: $0.toStore != nil, hasRelease: $0.manifest != nil, phase: $0.machine.phase, now: clock.monotonic,
                watchVerdictUntil: $0.watchVerdictUntil)
        }
    }

    /// After a round: at once for a release taken meanwhile, soon once driverd-update was asked (for
    /// `verdictWatchSeconds` from the ask: a verdict that never comes is looked for at the round's pace after
    /// that, not every 2 s for ever), else later.
    static func nextStep(releaseTaken: Bool, hasRelease: Bool, phase: UpdateStateMachine.Phase, now: Double, watchVerdictUntil: Double) -> Step {
        if releaseTaken { return .again }
        if !hasRelease { return .idle }
        return phase == .installing && now < watchVerdictUntil ? .verdictSoon : .later
    }

    /// Free space a download leaves beside the reserve: the pings of an offline day and the driver's changes.
    static let storeMargin: Int64 = 16 << 20

    private func pause(_ reason: String) {
        state.withLock {
            if $0.waitingFor != reason { logger.info("release download paused: \(reason)") }
            if let manifest = $0.manifest { $0.machine.paused(.init(sha256: manifest.sha256, chunks: manifest.chunks.count)) }
            $0.waitingFor = reason
        }
    }

    private func download(_ manifest: ReleaseManifest) async {
        guard let session else { return }
        let release = UpdateStateMachine.Release(sha256: manifest.sha256, chunks: manifest.chunks.count)
        // The day's count is written at most every `budgetSaveBytes` and when the download stops, not per chunk
        // (flash): a crash forgets less than that much of the day's bytes.
        var unsaved = 0
        defer { if unsaved > 0 { saveBudget() } }
        while true {
            let have: Int
            switch state.withLock({ $0.machine.nextDownloadStep(release) }) {
            case .stop: return
            case .checkWhole: return finishDownload(manifest)
            case .fetch(let index): have = index
            }
            // Lowest priority: an SOS, a status or a proof waiting for the link goes first.
            let depth: Outbox.Depth
            do {
                depth = try outbox.depth()
            } catch {
                return pause("the outbox cannot be read: \(error)")
            }
            if depth.sos + depth.transitions + depth.proofs > 0 { return pause("an SOS, a status or a proof waits to be sent") }
            guard session.isOnline else { return pause("the backend is not reachable") }
            let length = manifest.length(ofChunk: have)
            // Not fetched to be thrown away (the data plan): the chunk must fit beside the driver's reserve and a margin.
            let store = outbox.store.health.check()
            guard store.canSave, (store.freeBytes ?? .max) > Int64(length) + store.reserveBytes + Self.storeMargin else {
                return pause("no room to store the release: storage \(store.summary)")
            }
            let today = Self.day(clock.now().time)
            guard budget.withLock({ $0.allows(length, day: today, max: settings.maxBytesPerDay) }) else {
                return pause("today's download budget (update.max_bytes_per_day = \(settings.maxBytesPerDay)) is spent")
            }
            let bytes: Data
            do {
                bytes = try await session.authorized { client, token in try await client.releaseChunk(sha256: manifest.sha256, index: have, token: token) }
            } catch {
                return pause("chunk \(have) not fetched: \(error)")
            }
            budget.withLock { $0.spend(bytes.count, day: today) }
            unsaved += bytes.count
            if unsaved >= Self.budgetSaveBytes {
                saveBudget()
                unsaved = 0
            }
            // Replaced while this chunk was on its way: not written into the next release's file.
            guard state.withLock({ $0.machine.isCurrent(release) }) else { return }
            guard bytes.count == length, FleetSignature.sha256Hex(bytes) == manifest.chunks[have] else {
                return pause("chunk \(have) did not match its SHA-256: fetched again later")
            }
            do {
                try DurableFile.write(bytes, to: files.part, at: manifest.offset(ofChunk: have))
            } catch {
                return pause("cannot store chunk \(have): \(Store.describeWriteFailure(error))")
            }
            state.withLock {
                $0.machine.chunkStored(release, index: have)
                $0.waitingFor = nil
            }
        }
    }

    /// How many downloaded bytes may go unrecorded in `budget.json`.
    static let budgetSaveBytes = 1 << 20

    private func saveBudget() {
        let spent = budget.withLock { $0 }
        do {
            try DurableFile.write(Data(Codec.encode(spent)), to: files.budget)
        } catch {
            logger.error("cannot record today's downloaded bytes: \(Store.describeWriteFailure(error))")
        }
    }

    private func finishDownload(_ manifest: ReleaseManifest) {
        let release = UpdateStateMachine.Release(sha256: manifest.sha256, chunks: manifest.chunks.count)
        let matches: Bool
        do {
            matches = try UpdateFiles.sha256(ofFile: files.part) == manifest.sha256
        } catch {
            return pause("cannot read the package: \(Store.describeWriteFailure(error))")
        }
        let (action, offer) = state.withLock { ($0.machine.wholeChecked(release, matches: matches), $0.offer) }
        switch action {
        case .stop:
            return
        case .refuse:
            // Every chunk matched its own SHA-256: the same bytes come every time, so no download can satisfy it.
            saveGivenUp()
            removeFiles(keepingOutcome: true)
            state.withLock {
                $0.manifest = nil
                $0.waitingFor = nil
            }
            refuse(manifest, offer: offer, reason: "every chunk matched its SHA-256 and the whole package did not match the manifest's: no download can satisfy this manifest")
        case .keep:
            do {
                try DurableFile.rename(files.part, to: files.package)
            } catch {
                return pause("cannot keep the package: \(Store.describeWriteFailure(error))")
            }
            state.withLock { $0.waitingFor = nil }
            logger.notice("release \(manifest.package) \(manifest.version) downloaded (\(manifest.size) bytes, SHA-256 matches)")
            answer(UpdateAck(
                package: manifest.package, version: manifest.version, status: .downloaded, reason: nil, runningVersion: DaemonVersion.current,
                at: clock.now().time, sha256: manifest.sha256), key: manifest.sha256)
        }
    }

    // MARK: Installing

    private func considerInstalling(_ manifest: ReleaseManifest) async {
        // Installed already (this process started from that install's postinst): the verdict follows.
        if let installed = installed.packages[manifest.package], let running = DebianVersion(installed.version),
           let offered = DebianVersion(manifest.version), offered <= running {
            state.withLock { $0.machine.foundInstalled() }
            return
        }
        let decision: MaintenanceWindow.Decision
        do {
            decision = settings.window.decide(try await situation())
        } catch {
            logger.error("cannot tell whether the unit is quiet, so no install yet: \(Store.describeWriteFailure(error))")
            return
        }
        guard decision == .install else {
            if case .wait(let reason) = decision { state.withLock { $0.waitingFor = reason } }
            return
        }
        do {
            guard let signed = try DurableFile.contents(files.release) else { throw APIError(.internalError, "release.json is gone") }
            try DurableFile.write(signed, to: files.request)
        } catch {
            logger.error("cannot ask for the install: \(Store.describeWriteFailure(error))")
            return
        }
        state.withLock {
            $0.machine.installAsked()
            $0.watchVerdictUntil = clock.monotonic + Self.verdictWatchSeconds
            $0.waitingFor = nil
        }
        logger.notice("maintenance window: asking driverd-update to install \(manifest.package) \(manifest.version)")
    }

    // MARK: Status

    func status() -> UpdateStatus {
        let installed = installed.packages[settings.package]
        let today = Self.day(clock.now().time)
        return state.withLock { state in
            UpdateStatus(
                mode: settings.mode, package: settings.package, installedVersion: installed?.version ?? DaemonVersion.current,
                release: state.manifest.map { manifest in
                    ReleaseProgress(
                        package: manifest.package, version: manifest.version, size: manifest.size,
                        downloadedBytes: min(manifest.size, state.machine.chunksHave * manifest.chunkSize), state: Self.progressState(state.machine.phase),
                        waitingFor: state.waitingFor)
                },
                window: settings.window.description, bytesToday: budget.withLock { $0.spent(day: today) }, maxBytesPerDay: settings.maxBytesPerDay,
                lastOutcome: state.lastOutcome)
        }
    }

    private static func progressState(_ phase: UpdateStateMachine.Phase) -> ReleaseProgress.State {
        switch phase {
        case .downloading: .downloading
        case .paused: .paused
        case .downloaded: .downloaded
        case .installing: .installing
        }
    }

    /// The UTC day number of `time` (the budget is per day; which midnight matters little).
    static func day(_ time: Double) -> Int { Int((time / 86400).rounded(.down)) }

    // MARK: Running

    /// Seconds between rounds while a release is on its way in (a paused download, the window).
    static let roundSeconds = 30.0
    /// Seconds between looks for driverd-update's verdict while it installs, for the first `verdictWatchSeconds`
    /// (its health gate ends within minutes: `readyWithin` and `update.healthy_seconds`).
    static let verdictSeconds = 2.0
    static let verdictWatchSeconds = 600.0

    func run() async {
        // No fetch at start: the uplink's first success (`whenLinkRestored`) asks, once it holds a valid token; a
        // fetch racing its first refresh could spend the refresh token it is about to use.
        resume()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                for await waiter in requests {
                    do {
                        try await check()
                        waiter?.resume()
                    } catch {
                        waiter?.resume(throwing: error)
                    }
                }
            }
            group.addTask { [self] in
                var wakes = wakes.makeAsyncIterator()
                while !Task.isCancelled {
                    let seconds: Double
                    switch await work() {
                    case .idle:
                        // Nothing accepted: no timer while there is nothing to do.
                        guard await wakes.next() != nil else { return }
                        continue
                    case .again:
                        continue
                    case .later:
                        seconds = Self.roundSeconds
                    case .verdictSoon:
                        seconds = Self.verdictSeconds
                    }
                    // The timer or an earlier wake, whichever comes first (a stale timer's wake costs one round).
                    let timer = Task { [clock, wakesContinuation] in
                        try await clock.sleep(for: seconds)
                        wakesContinuation.yield()
                    }
                    defer { timer.cancel() }
                    guard await wakes.next() != nil else { return }
                }
            }
            await group.next()
            group.cancelAll()
        }
    }
}

/// Bytes downloaded on one day, kept across restarts (a daemon restarted every hour must not get a new budget).
struct DailyBudget: Codable, Sendable, Equatable {
    var day = 0
    var bytes = 0

    func spent(day: Int) -> Int { day == self.day ? bytes : 0 }

    func allows(_ count: Int, day: Int, max: Int) -> Bool { spent(day: day) + count <= max }

    mutating func spend(_ count: Int, day: Int) {
        if day != self.day {
            self.day = day
            bytes = 0
        }
        bytes += count
    }

    /// None spent when there is no file yet; throws when it cannot be read or decoded.
    static func read(_ path: String) throws -> DailyBudget {
        try DurableFile.contents(path).map { try Codec.decode(DailyBudget.self, from: $0) } ?? DailyBudget()
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
        uplink.whenPushed { [self] push in if push.kind == .updateAvailable { requestCheck() } }
        // The link back: what is staged now, and a download paused while the backend was away goes on at once
        // rather than at the next round (a restart mid-download used to wait up to `roundSeconds` for it).
        uplink.whenLinkRestored { [self] in
            requestCheck()
            situationChanged()
        }
    }
}

struct UpdateService: Service {
    let desk: UpdateDesk

    func run() async {
        await cancelWhenGracefulShutdown { await desk.run() }
    }
}
