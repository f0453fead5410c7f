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

/// Takes the fleet's configuration documents: fetches one when the backend says so (a `CONFIG_UPDATE` push) and
/// when the link comes back, checks it (the fleet's Ed25519 signature, newer than what runs, remote keys only,
/// every value valid), puts it on trial durably and asks for a restart to run it; answers REFUSED with the reason
/// otherwise. A trial that runs `remote.healthy_seconds` becomes good (APPLIED). Every answer goes through the
/// outbox, in the same transaction as the change it reports.
final class RemoteConfigDesk: Sendable {
    let book: RemoteConfigBook
    let outbox: Outbox
    /// The backend's calls (none: no backend configured).
    let session: BackendSession?
    /// What runs now, and the key that signs what may run next.
    let start: RemoteConfigStart
    let publicKey: String
    let healthySeconds: Double
    let clock: DaemonClock
    let logger: Logger
    /// Checks to make, one at a time (a push and a reconnection may come together).
    let requests: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    /// Documents refused by this process (by their bytes): one offered again is not checked again. (Its answer is
    /// queued once ever, whatever the process: `Outbox.enqueueAnswerOnce`.)
    private let refused = Mutex<Set<String>>([])
    /// The version accepted to run next: the daemon stops so that its supervisor starts it with it.
    let restartFor = Mutex<Int?>(nil)
    /// The running document is still on trial (until its healthy run).
    private let onTrial: Mutex<Bool>

    init(book: RemoteConfigBook, outbox: Outbox, session: BackendSession?, start: RemoteConfigStart, clock: DaemonClock, logger: Logger) {
        self.book = book
        self.outbox = outbox
        self.session = session
        self.start = start
        publicKey = start.config.remotePublicKey
        healthySeconds = start.config.remoteHealthySeconds
        self.clock = clock
        self.logger = logger
        onTrial = Mutex(start.onTrial)
        (requests, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Fetch and check the document soon.
    func requestCheck() { continuation.yield() }

    func finish() { continuation.finish() }

    /// Fetches the document and acts on it. True when one was accepted and the daemon must restart to run it.
    func check() async -> Bool {
        guard let session else { return false }
        let reply: ConfigReply
        do {
            reply = try await session.authorized { client, token in try await client.remoteConfig(token: token) }
        } catch {
            logger.info("remote configuration not fetched: \(error)")
            return false
        }
        guard let signed = reply.document else { return false }
        guard let payload = Data(base64Encoded: signed.payload) else {
            logger.error("the backend's configuration document is not base64: ignored")
            return false
        }
        let document: RemoteConfigDocument
        do {
            document = try Codec.decode(RemoteConfigDocument.self, from: payload)
        } catch {
            logger.error("the backend's configuration document is not a document's JSON (\(error)): ignored")
            return false
        }
        let digest = FleetSignature.digest(payload)
        let snapshot: RemoteConfigBook.Snapshot
        do {
            snapshot = try book.snapshot()
        } catch {
            logger.error("cannot read the stored configuration documents: \(error)")
            return false
        }
        // What runs, waits to run, or was answered before (a document given up is offered again) is not news.
        if document.version == start.running || document.version == snapshot.trial?.version { return false }
        do {
            if let stored = try book.record(version: document.version), stored.payload == payload { return false }
        } catch {
            logger.error("cannot read stored configuration v\(document.version): \(error)")
            return false
        }
        if refused.withLock({ $0.contains(digest) }) { return false }
        if let problem = refusal(document, payload: payload, signature: signed.signature, newest: snapshot.newest) {
            refuse(document.version, payload: payload, digest: digest, reason: problem)
            return false
        }
        do {
            try book.beginTrial(RemoteConfigRecord(
                version: document.version, payload: payload, signature: signed.signature ?? "", state: .trial, receivedAt: clock.now().time))
        } catch {
            logger.error("cannot store remote configuration v\(document.version): \(Store.describeWriteFailure(error))")
            return false
        }
        logger.notice("remote configuration v\(document.version) accepted (\(document.settings.keys.sorted().joined(separator: ", "))): restarting to run it")
        restartFor.withLock { $0 = document.version }
        return true
    }

    /// Why `document` may not run here, or nil.
    private func refusal(_ document: RemoteConfigDocument, payload: Data, signature: String?, newest: Int?) -> String? {
        guard !publicKey.isEmpty else { return "this unit has no remote.public_key: it takes no remote configuration" }
        guard let signature, !signature.isEmpty else { return "unsigned: a document must carry the fleet's Ed25519 signature" }
        guard FleetSignature.isValid(signature, of: payload, publicKey: publicKey) else {
            return "bad signature: not made by the fleet key this unit trusts (remote.public_key)"
        }
        if case .failure(let refusal) = RemoteConfigRules.check(document, running: start.running, newest: newest, layers: start.layers) {
            return refusal.reason
        }
        return nil
    }

    private func refuse(_ version: Int, payload: Data, digest: String, reason: String) {
        logger.warning("remote configuration v\(version) refused: \(reason)")
        do {
            // Once ever: after a restart the backend may offer it again, and hears the first answer only.
            let queued = try outbox.enqueueAnswerOnce(RemoteConfigStart.ack(
                ConfigAck(version: version, status: .refused, reason: reason, runningVersion: start.running, at: clock.now().time), payload: payload))
            refused.withLock { _ = $0.insert(digest) }
            if !queued { logger.info("remote configuration v\(version) was refused before: the backend has that answer") }
        } catch {
            logger.error("cannot queue the refusal of v\(version): \(Store.describeWriteFailure(error))")
        }
    }

    /// The trial ran long enough: it is good now, and the fleet hears so.
    func promote() {
        guard start.onTrial, let version = start.running,
              let record = logger.valueOrLog("reading the configuration on trial", { try book.snapshot().trial }) ?? nil, record.version == version
        else { return }
        do {
            try book.promote(version: version, ack: RemoteConfigStart.ack(
                ConfigAck(version: version, status: .applied, reason: nil, runningVersion: version, at: clock.now().time), payload: record.payload))
            onTrial.withLock { $0 = false }
            logger.notice("remote configuration v\(version) ran \(Int(healthySeconds)) s healthily: it is the good one now")
        } catch {
            logger.error("cannot mark remote configuration v\(version) good: \(Store.describeWriteFailure(error))")
        }
    }

    /// `config.show`: every key's value and where it came from.
    func show() -> ConfigShowResult {
        let values = start.config.effectiveValues
        let entries = values.keys.sorted().map { key in
            ConfigEntry(key: key, value: values[key] ?? "", source: start.layers.source(of: key).description)
        }
        return ConfigShowResult(
            entries: entries,
            remote: RemoteConfigStatus(enabled: !publicKey.isEmpty, running: start.running, onTrial: onTrial.withLock { $0 }))
    }
}

/// Fetches documents when asked, one at a time; promotes a trial after its healthy run; ends (and with it the
/// daemon, gracefully) when a document was accepted and needs a restart.
struct RemoteConfigService: Service {
    let desk: RemoteConfigDesk

    func run() async {
        let promoter = desk.start.onTrial ? Task { [desk] in
            try await desk.clock.sleep(for: desk.healthySeconds)
            desk.promote()
        } : nil
        defer { promoter?.cancel() }
        await cancelWhenGracefulShutdown {
            for await _ in desk.requests where await desk.check() { return }
        }
    }
}

/// The desk owns the configuration lane (its answers to the fleet's documents), and hears when the fleet may
/// have a new document: a `CONFIG_UPDATE` push, or the link coming back.
extension RemoteConfigDesk {
    func attach(to uplink: Uplink) {
        uplink.register(.configAck, .posting(to: BackendPaths.configAcks))
        uplink.subscribe(UplinkSubscription(
            pushes: [.configUpdate], pushed: { [self] _ in requestCheck() }, linkRestored: { [self] in requestCheck() }))
    }
}

extension RemoteConfigDesk: MethodOwner {
    /// `config.show`.
    func register(in router: inout RPCRouter) {
        router.register(Methods.configShow) { _, _ in self.show() }
    }
}
