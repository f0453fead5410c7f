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
    typealias SituationReader = @Sendable () async -> MaintenanceWindow.Situation

    private struct State {
        var manifest: ReleaseManifest?
        var chunksHave = 0
        var phase = ReleaseProgress.State.downloading
        var waitingFor: String?
        var lastOutcome: UpdateOutcome?
        /// Offers refused (by the digest of the manifest and its signature), so a backend that keeps offering one
        /// hears once.
        var refused: Set<String> = []
        /// Packages driverd-update rolled back (by SHA-256), kept on disk (`given-up.json`): never taken again.
        var givenUp: Set<String> = []
    }

    let settings: Settings
    let files: UpdateFiles
    let outbox: Outbox
    let uplink: Uplink?
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
    /// Wakes the idle worker when a release was accepted.
    private let accepted: AsyncStream<Void>
    private let acceptedContinuation: AsyncStream<Void>.Continuation

    init(settings: Settings, outbox: Outbox, uplink: Uplink?, clock: DaemonClock, situation: @escaping SituationReader, logger: Logger) {
        self.settings = settings
        files = UpdateFiles(directory: settings.directory)
        self.outbox = outbox
        self.uplink = uplink
        self.clock = clock
        self.situation = situation
        dpkgStatus = InstalledPackagesFile(path: settings.dpkgStatus)
        self.logger = logger
        budget = Mutex(DailyBudget.read(UpdateFiles(directory: settings.directory).budget))
        state.withLock { $0.givenUp = Set(UpdateFiles(directory: settings.directory).givenUp()) }
        (requests, continuation) = AsyncStream.makeStream(of: CheckedContinuation<Void, any Error>?.self)
        (accepted, acceptedContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func requestCheck() { continuation.yield(nil) }

    /// `update.check`: fetches what is staged now (as a push would), and answers once that is done.
    func checkNow() async throws -> UpdateStatus {
        try await withCheckedThrowingContinuation { waiter in
            if case .terminated = continuation.yield(waiter) { waiter.resume(throwing: APIError(.unavailable, "driverd is stopping")) }
        }
        return status()
    }

    func finish() {
        continuation.finish()
        acceptedContinuation.finish()
    }

    var installed: InstalledPackages { dpkgStatus.current }

    // MARK: The release

    /// Fetches what is staged for this unit and takes it when it may run here. Throws when the backend was not
    /// reached; a release refused or ignored is an answer, not an error.
    func check() async throws {
        guard let uplink else { throw APIError(.unavailable, "no backend is configured (backend.url)") }
        let reply: ReleaseReply
        do {
            reply = try await uplink.authorized { client, token in try await client.release(token: token) }
        } catch {
            logger.info("release not fetched: \(error)")
            throw APIError(.unavailable, "the backend was not reached: \(error)")
        }
        guard let signed = reply.release else { return }
        guard let payload = Data(base64Encoded: signed.payload), let manifest = try? JSONDecoder().decode(ReleaseManifest.self, from: payload) else {
            logger.error("the backend's release is not base64 of a manifest's JSON: ignored")
            return
        }
        let offer = FleetSignature.sha256Hex(payload + Data((signed.signature ?? "").utf8))
        let known = state.withLock {
            $0.manifest?.sha256 == manifest.sha256 || $0.refused.contains(offer) || $0.givenUp.contains(manifest.sha256)
        }
        if known { return }
        if let reason = refusal(manifest, payload: payload, signature: signed.signature) {
            refuse(manifest, offer: offer, reason: reason)
            return
        }
        do {
            try DurableFile.remove(files.part)
            try DurableFile.remove(files.package)
            try DurableFile.write(Data(try Codec.encode(signed)), to: files.release)
        } catch {
            logger.error("cannot store release \(manifest.version): \(Store.describeWriteFailure(error))")
            return
        }
        state.withLock {
            $0.manifest = manifest
            $0.chunksHave = 0
            $0.phase = .downloading
            $0.waitingFor = nil
        }
        logger.notice("release \(manifest.package) \(manifest.version) accepted (\(manifest.size) bytes): downloading at low priority")
        acceptedContinuation.yield()
    }

    /// Why `manifest` may not be installed here, or nil.
    private func refusal(_ manifest: ReleaseManifest, payload: Data, signature: String?) -> String? {
        if settings.mode == .external {
            return "this unit's image is updated externally (update.mode = external): it runs \(DaemonVersion.current)"
        }
        guard !settings.publicKey.isEmpty else { return "this unit has no update.public_key: it takes no release" }
        guard let signature, !signature.isEmpty else { return "unsigned: a release must carry the fleet's Ed25519 signature" }
        guard FleetSignature.isValid(signature, of: payload, publicKey: settings.publicKey) else {
            return "bad signature: not made by the release key this unit trusts (update.public_key)"
        }
        guard manifest.isConsistent else { return "the manifest's chunks do not add up to its size" }
        guard let installed = installed.packages[manifest.package] else {
            return "package \(manifest.package) is not installed on this unit"
        }
        guard manifest.architecture == installed.architecture || manifest.architecture == "all" else {
            return "architecture \(manifest.architecture): this unit's \(manifest.package) is \(installed.architecture)"
        }
        guard let offered = DebianVersion(manifest.version) else { return "version \(manifest.version) is not a Debian version" }
        if let running = DebianVersion(installed.version), offered <= running {
            return "version \(manifest.version) is not newer than the installed \(installed.version)"
        }
        // Room for the download and for driverd-update's copy of it, with a margin for the database.
        let needed = 2 * manifest.size + Self.spareBytes
        if let free = UpdateFiles.freeBytes(at: DurableFile.directory(of: files.directory)), free < needed {
            return "not enough disk space: needs \(needed >> 20) MiB, \(free >> 20) MiB free"
        }
        return nil
    }

    /// Left free for the outbox beside a release.
    static let spareBytes = 32 << 20

    private func refuse(_ manifest: ReleaseManifest, offer: String, reason: String) {
        logger.warning("release \(manifest.package) \(manifest.version) refused: \(reason)")
        answer(UpdateAck(
            package: manifest.package, version: manifest.version, status: .refused, reason: reason, runningVersion: DaemonVersion.current,
            at: clock.now().time), key: offer)
        state.withLock {
            $0.refused.insert(offer)
            $0.lastOutcome = UpdateOutcome(package: manifest.package, version: manifest.version, status: .refused, reason: reason, at: clock.now().time)
        }
    }

    /// Queues an answer to the backend (durably; its key names the release and the answer, so a repeat is one).
    private func answer(_ ack: UpdateAck, key: String) {
        do {
            _ = try outbox.enqueue(OutboxItemRecord(
                kind: .updateAck, taskId: TaskRecord.updateLane,
                idempotencyKey: "update-\(ack.package)-\(ack.version)-\(ack.status.rawValue.lowercased())-\(key.prefix(12))",
                payload: Data(try Codec.encode(ack)), createdAt: ack.at))
            uplink?.itemQueued()
        } catch {
            logger.error("cannot queue the answer to release \(ack.version): \(Store.describeWriteFailure(error))")
        }
    }

    // MARK: Resuming

    /// What a previous run left: driverd-update's verdict to report, a release to go on with.
    func resume() {
        reportOutcome()
        guard let manifest = storedManifest() else { return }
        // What runs now may be newer than that release: nothing left to do. When it is that release, driverd-update
        // is judging it (its verdict follows).
        var requested = access(files.request, F_OK) == 0
        if let installed = installed.packages[manifest.package], let running = DebianVersion(installed.version),
           let offered = DebianVersion(manifest.version), offered <= running {
            guard offered == running else {
                clear()
                return
            }
            requested = true
        }
        let complete = access(files.package, F_OK) == 0
        let have = complete ? manifest.chunks.count : ((try? files.verifiedChunks(of: manifest)) ?? 0)
        state.withLock {
            $0.manifest = manifest
            $0.chunksHave = have
            $0.phase = requested ? .installing : complete ? .downloaded : .downloading
        }
        logger.info("release \(manifest.package) \(manifest.version): \(have) of \(manifest.chunks.count) chunks here\(requested ? ", install asked" : "")")
    }

    /// The release accepted before, as stored.
    private func storedManifest() -> ReleaseManifest? {
        guard let data = try? DurableFile.contents(files.release), let signed = try? JSONDecoder().decode(SignedRelease.self, from: data),
              let payload = Data(base64Encoded: signed.payload)
        else { return nil }
        return try? JSONDecoder().decode(ReleaseManifest.self, from: payload)
    }

    /// driverd-update's verdict, when it left one: reported once, then the release's files go.
    func reportOutcome() {
        guard let data = try? DurableFile.contents(files.outcome) else { return }
        guard let ack = try? JSONDecoder().decode(UpdateAck.self, from: data) else {
            logger.error("driverd-update's outcome file cannot be read: removed")
            try? DurableFile.remove(files.outcome)
            return
        }
        // The package it judged: the one accepted (a rolled-back release is never taken again).
        let sha = state.withLock { $0.manifest?.sha256 } ?? storedManifest()?.sha256 ?? "installer"
        answer(ack, key: sha)
        if ack.status != .applied, sha != "installer" {
            files.giveUp(sha)
            state.withLock { _ = $0.givenUp.insert(sha) }
        }
        let status = UpdateOutcome.Status(rawValue: ack.status.rawValue) ?? .refused
        state.withLock { $0.lastOutcome = UpdateOutcome(package: ack.package, version: ack.version, status: status, reason: ack.reason, at: ack.at) }
        if ack.status == .applied {
            logger.notice("release \(ack.package) \(ack.version) applied: it passed its health gate")
        } else {
            logger.warning("release \(ack.package) \(ack.version) \(ack.status.rawValue): \(ack.reason ?? "")")
        }
        clear()
    }

    private func clear() {
        for path in [files.outcome, files.request, files.package, files.part, files.release] { try? DurableFile.remove(path) }
        state.withLock {
            $0.manifest = nil
            $0.chunksHave = 0
            $0.waitingFor = nil
        }
    }

    // MARK: Download

    enum Step: Equatable {
        /// Nothing to do until the backend offers something.
        case idle
        /// Try again after a while (paused, or waiting for the window or driverd-update).
        case later
    }

    /// One round of work on the accepted release.
    func work() async -> Step {
        // driverd-update's verdict, whatever this process thought: it may have started in the middle of the install.
        if access(files.outcome, F_OK) == 0 { reportOutcome() }
        guard let manifest = state.withLock({ $0.manifest }) else { return .idle }
        switch state.withLock({ $0.phase }) {
        case .downloading, .paused:
            await download(manifest)
            // Straight on to the window when the last chunk came.
            if state.withLock({ $0.phase }) == .downloaded { await considerInstalling(manifest) }
            return .later
        case .downloaded:
            await considerInstalling(manifest)
            return .later
        case .installing:
            return .later
        }
    }

    private func pause(_ reason: String) {
        state.withLock {
            if $0.waitingFor != reason { logger.info("release download paused: \(reason)") }
            $0.phase = .paused
            $0.waitingFor = reason
        }
    }

    private func download(_ manifest: ReleaseManifest) async {
        guard let uplink else { return }
        // The day's count is written at most every `budgetSaveBytes` and when the download stops, not per chunk
        // (flash): a crash forgets less than that much of the day's bytes.
        var unsaved = 0
        defer { if unsaved > 0 { saveBudget() } }
        while true {
            let have = state.withLock { $0.chunksHave }
            if have == manifest.chunks.count { return finishDownload(manifest) }
            // Lowest priority: an SOS, a status or a proof waiting for the link goes first.
            let depth = (try? outbox.depth()) ?? Outbox.Depth()
            if depth.sos + depth.transitions + depth.proofs > 0 { return pause("an SOS, a status or a proof waits to be sent") }
            guard uplink.isOnline else { return pause("the backend is not reachable") }
            let length = manifest.length(ofChunk: have)
            let today = Self.day(clock.now().time)
            guard budget.withLock({ $0.allows(length, day: today, max: settings.maxBytesPerDay) }) else {
                return pause("today's download budget (update.max_bytes_per_day = \(settings.maxBytesPerDay)) is spent")
            }
            let bytes: Data
            do {
                bytes = try await uplink.authorized { client, token in try await client.releaseChunk(sha256: manifest.sha256, index: have, token: token) }
            } catch {
                return pause("chunk \(have) not fetched: \(error)")
            }
            budget.withLock { $0.spend(bytes.count, day: today) }
            unsaved += bytes.count
            if unsaved >= Self.budgetSaveBytes {
                saveBudget()
                unsaved = 0
            }
            guard bytes.count == length, FleetSignature.sha256Hex(bytes) == manifest.chunks[have] else {
                return pause("chunk \(have) did not match its SHA-256: fetched again later")
            }
            do {
                try DurableFile.write(bytes, to: files.part, at: have * manifest.chunkSize)
            } catch {
                return pause("cannot store chunk \(have): \(Store.describeWriteFailure(error))")
            }
            state.withLock {
                $0.chunksHave = have + 1
                $0.phase = .downloading
                $0.waitingFor = nil
            }
        }
    }

    /// How many downloaded bytes may go unrecorded in `budget.json`.
    static let budgetSaveBytes = 1 << 20

    private func saveBudget() {
        let spent = budget.withLock { $0 }
        try? DurableFile.write(Data(Codec.encode(spent)), to: files.budget)
    }

    private func finishDownload(_ manifest: ReleaseManifest) {
        do {
            guard try UpdateFiles.sha256(ofFile: files.part) == manifest.sha256 else {
                logger.error("release \(manifest.version): the whole package does not match its SHA-256: downloading it again")
                try DurableFile.remove(files.part)
                state.withLock { $0.chunksHave = 0 }
                return
            }
            try DurableFile.rename(files.part, to: files.package)
        } catch {
            return pause("cannot keep the package: \(Store.describeWriteFailure(error))")
        }
        state.withLock {
            $0.phase = .downloaded
            $0.waitingFor = nil
        }
        logger.notice("release \(manifest.package) \(manifest.version) downloaded (\(manifest.size) bytes, SHA-256 matches)")
        answer(UpdateAck(
            package: manifest.package, version: manifest.version, status: .downloaded, reason: nil, runningVersion: DaemonVersion.current,
            at: clock.now().time), key: manifest.sha256)
    }

    // MARK: Installing

    private func considerInstalling(_ manifest: ReleaseManifest) async {
        // Installed already (this process started from that install's postinst): the verdict follows.
        if let installed = installed.packages[manifest.package], let running = DebianVersion(installed.version),
           let offered = DebianVersion(manifest.version), offered <= running {
            state.withLock { $0.phase = .installing }
            return
        }
        let decision = settings.window.decide(await situation())
        guard decision == .install else {
            if case .wait(let reason) = decision { state.withLock { $0.waitingFor = reason } }
            return
        }
        guard let signed = try? DurableFile.contents(files.release) else { return }
        do {
            try DurableFile.write(signed, to: files.request)
        } catch {
            logger.error("cannot ask for the install: \(Store.describeWriteFailure(error))")
            return
        }
        state.withLock {
            $0.phase = .installing
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
                        downloadedBytes: min(manifest.size, state.chunksHave * manifest.chunkSize), state: state.phase, waitingFor: state.waitingFor)
                },
                window: settings.window.description, bytesToday: budget.withLock { $0.spent(day: today) }, maxBytesPerDay: settings.maxBytesPerDay,
                lastOutcome: state.lastOutcome)
        }
    }

    /// The UTC day number of `time` (the budget is per day; which midnight matters little).
    static func day(_ time: Double) -> Int { Int((time / 86400).rounded(.down)) }

    // MARK: Running

    /// Seconds between rounds while a release is on its way in (a paused download, the window, driverd-update).
    static let roundSeconds = 30.0

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
                var wakes = accepted.makeAsyncIterator()
                while !Task.isCancelled {
                    if await work() == .idle {
                        // Nothing accepted: no timer while there is nothing to do.
                        guard await wakes.next() != nil else { return }
                        continue
                    }
                    do { try await clock.sleep(for: Self.roundSeconds) } catch { return }
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

    static func read(_ path: String) -> DailyBudget {
        (try? DurableFile.contents(path)).flatMap { $0 }.flatMap { try? JSONDecoder().decode(DailyBudget.self, from: $0) } ?? DailyBudget()
    }
}

/// The desk owns the release lane (its answers to the fleet's releases), and hears when the fleet may have a new
/// release: an `UPDATE_AVAILABLE` push, or the link coming back.
extension UpdateDesk {
    /// `update.status` and `update.check`.
    func register(in router: inout RPCRouter) {
        router.register(Methods.updateStatus) { _, _ in self.status() }
        router.register(Methods.updateCheck) { _, _ in try await self.checkNow() }
    }
}

extension UpdateDesk: OutboxItemOwner {
    func attach(to uplink: Uplink) {
        uplink.register(self, for: [.updateAck])
        uplink.whenPushed { [self] push in if push.kind == .updateAvailable { requestCheck() } }
        uplink.whenLinkRestored { [self] in requestCheck() }
    }

    func send(_ item: OutboxItemRecord, with client: any BackendAPI, token: String) async throws -> TaskStatus? {
        _ = try await client.postActivity(path: BackendPaths.releaseAcks, body: item.payload, idempotencyKey: item.idempotencyKey, token: token)
        return nil
    }
}

struct UpdateService: Service {
    let desk: UpdateDesk

    func run() async {
        await cancelWhenGracefulShutdown { await desk.run() }
    }
}
