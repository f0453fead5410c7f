import BackendClient
import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials
import JSONRPC
import Logging
import NIOPosix
import ServiceLifecycle
import Synchronization

/// Makes the support bundle of `driverctl diag --bundle` (the same code: the multi-call binary hands it over):
/// the report, the journal of the last `windowSeconds` (at most `maxJournalLines` lines), as .tar.gz bytes.
typealias DiagBundleMaker = @Sendable (_ report: DiagReport, _ windowSeconds: Double, _ maxJournalLines: Int) throws -> Data

/// Why a request is not done, for its answer.
private struct Refused: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// A chunk of a bundle waiting in the outbox: where its bytes are in the spooled file.
struct DiagChunkItem: Codable, Sendable, Equatable {
    var requestId: String
    var index: Int
    var count: Int
    var offset: Int
    var length: Int
    var sha256: String
    var file: String
}

/// Answers what the fleet asks from afar (a `FLEET_REQUEST` push), each request once: a diagnostic bundle
/// (built, spooled durably, uploaded in chunks at low priority that resume after a crash or a dropped link), a
/// one-off position report, a log level until an expiry. The answer, and a bundle's chunks, are queued in the
/// transaction that records the request.
final class FleetRequestDesk: Sendable {
    struct Settings: Sendable {
        var chunkBytes: Int
        var maxBundleBytes: Int
        /// The level the configuration sets, which a temporary one returns to.
        var configuredLevel: Logger.Level
        var spoolDirectory: String
    }

    let book: FleetRequestBook
    let outbox: Outbox
    let tracker: Tracker
    let levelControl: LogLevelControl
    let settings: Settings
    let report: @Sendable () throws -> DiagReport
    let bundleMaker: DiagBundleMaker?
    let logger: Logger
    /// The pending return to the configured log level.
    private let levelReturn = Mutex<Task<Void, Never>?>(nil)

    init(
        book: FleetRequestBook, outbox: Outbox, tracker: Tracker, levelControl: LogLevelControl, settings: Settings,
        report: @escaping @Sendable () throws -> DiagReport, bundleMaker: DiagBundleMaker?, logger: Logger
    ) {
        self.book = book
        self.outbox = outbox
        self.tracker = tracker
        self.levelControl = levelControl
        self.settings = settings
        self.report = report
        self.bundleMaker = bundleMaker
        self.logger = logger
    }

    func finish() { levelReturn.withLock { $0?.cancel() } }

    /// A push carried a request: answered, and recorded with its answer, before the push counts as handled.
    func handle(_ request: FleetRequest) async {
        guard BackendPaths.isValidTaskID(request.requestId) else {
            logger.warning("a fleet request with an unusable id was ignored")
            return
        }
        // Answered before (its push came again), or a store that cannot say: not done twice (the push comes again).
        guard logger.valueOrLog("looking up fleet request \(request.requestId)", { try book.isKnown(request.requestId) }) == false else { return }
        let now = tracker.clock.now().time
        var ack = FleetRequestAck(requestId: request.requestId, kind: request.kind, status: .done, at: now)
        var chunks: [OutboxItemRecord] = []
        var afterwards: (@Sendable () -> Void)?
        switch request.kind {
        case .positionReport:
            if let fix = tracker.currentPosition(maxAge: SOSDesk.maxFixAge).fix {
                ack.position = Location(lat: fix.latitude, lng: fix.longitude, accuracy: fix.horizontalError)
                ack.positionTime = fix.time
            } else {
                ack.status = .refused
                ack.detail = "no fix in the last five minutes (GPS \(tracker.link.rawValue))"
            }
        case .logLevel:
            switch temporaryLevel(request) {
            case .success(let (level, seconds, apply)):
                ack.detail = "\(level) for \(Int(seconds)) s, then \(settings.configuredLevel) again"
                afterwards = apply
            case .failure(let refusal):
                ack.status = .refused
                ack.detail = refusal.reason
            }
        case .diagnosticBundle:
            let made = await bundle(request)
            // Stopping (a restart to apply a configuration): left untaken, the request comes again with its push.
            guard !Task.isCancelled else { return }
            switch made {
            case .success(let (items, bytes, sha256)):
                chunks = items
                ack.bundleBytes = bytes
                ack.bundleSHA256 = sha256
                ack.chunks = items.count
            case .failure(let refusal):
                ack.status = .refused
                ack.detail = refusal.reason
            }
        }
        do {
            let answer = OutboxItemRecord(
                kind: .fleetAck, taskId: TaskRecord.fleetLane, idempotencyKey: "request-\(request.requestId)", payload: try Data(Codec.encode(ack)),
                createdAt: now)
            guard try book.take(requestId: request.requestId, kind: request.kind.rawValue, at: now, items: [answer] + chunks) else { return }
        } catch {
            logger.error("cannot record fleet request \(request.requestId): \(Store.describeWriteFailure(error))")
            return
        }
        afterwards?()
        logger.notice("fleet request \(request.kind.rawValue) \(request.requestId): \(ack.status.rawValue)\(ack.detail.map { " (\($0))" } ?? "")")
    }

    // MARK: A log level until an expiry

    private func temporaryLevel(_ request: FleetRequest) -> Result<(Logger.Level, Double, @Sendable () -> Void), Refused> {
        guard let name = request.logLevel, let level = Logger.Level(rawValue: name) else {
            return .failure(Refused("logLevel must be one of trace, debug, info, notice, warning, error, critical"))
        }
        let seconds = request.expiresInSeconds ?? 3600
        guard (1...86400).contains(seconds) else { return .failure(Refused("expiresInSeconds must be from 1 to 86400")) }
        let control = levelControl, configured = settings.configuredLevel, logger = logger
        return .success((level, seconds, { [self] in
            control.set(level)
            let back = Task {
                do { try await self.tracker.clock.sleep(for: seconds) } catch { return }
                control.set(configured)
                logger.notice("log level back to \(configured) after the fleet's \(Int(seconds)) s of \(level)")
            }
            self.levelReturn.withLock { previous in
                previous?.cancel()
                previous = back
            }
        }))
    }

    // MARK: A diagnostic bundle

    /// Builds the bundle (fewer journal lines if it is over the cap), spools it, and cuts it into chunk items.
    /// Making it runs journalctl and tar: on the blocking pool, never on an event loop the daemon's tasks share.
    private func bundle(_ request: FleetRequest) async -> Result<([OutboxItemRecord], Int, String), Refused> {
        guard let bundleMaker else { return .failure(Refused("this build of driverd makes no diagnostic bundles")) }
        let window = min(max(request.windowSeconds ?? 86400, 60), 7 * 86400)
        let maxBytes = settings.maxBundleBytes
        let data: Data?
        do {
            let report = try report()
            data = try await NIOThreadPool.singleton.runIfActive {
                for lines in [5000, 1000, 200, 20] {
                    let made = try bundleMaker(report, window, lines)
                    if made.count <= maxBytes { return made }
                }
                return nil
            }
        } catch {
            return .failure(Refused("the bundle could not be made: \(error)"))
        }
        guard let data else { return .failure(Refused("the bundle is over diag.max_bundle_bytes (\(settings.maxBundleBytes)) even with 20 journal lines")) }
        let file = settings.spoolDirectory + "/\(request.requestId).tar.gz"
        do {
            try DurableFile.write(data, to: file)
        } catch {
            return .failure(Refused("the bundle could not be stored: \(error)"))
        }
        let sha256 = FleetSignature.sha256Hex(data)
        let count = max(1, (data.count + settings.chunkBytes - 1) / settings.chunkBytes)
        var items: [OutboxItemRecord] = []
        for index in 0..<count {
            let offset = index * settings.chunkBytes
            let chunk = DiagChunkItem(
                requestId: request.requestId, index: index, count: count, offset: offset, length: min(settings.chunkBytes, data.count - offset),
                sha256: sha256, file: file)
            let payload: Data
            do {
                payload = Data(try Codec.encode(chunk))
            } catch {
                return .failure(Refused("chunk \(index) of the bundle could not be encoded: \(error)"))
            }
            items.append(OutboxItemRecord(
                kind: .diagChunk, taskId: TaskRecord.diagnosticsLane, idempotencyKey: "diag-\(request.requestId)-\(index)", payload: payload,
                createdAt: tracker.clock.now().time))
        }
        return .success((items, data.count, sha256))
    }
}

/// At shutdown, a temporary log level's return is called off (the configured level starts with the next run).
struct FleetRequestService: Service {
    let desk: FleetRequestDesk

    func run() async {
        try? await gracefulShutdown()  // throws only when cancelled: a stop either way
        desk.finish()
    }
}

/// The desk owns the fleet's lanes (its one answer to each request, and a bundle's chunks), and takes the
/// requests a `FLEET_REQUEST` push brings.
extension FleetRequestDesk {
    func attach(to uplink: Uplink) {
        uplink.register(.fleetAck, .posting(to: BackendPaths.requestAcks))
        uplink.register(.diagChunk, OutboxKindHandler(send: { [self] item, client, token in
            try await sendChunk(item, with: client, token: token)
            return nil
        }, completed: { [self] item in await chunkCompleted(item) }))
        uplink.subscribe(UplinkSubscription(pushes: [.fleetRequest], pushed: { [self] push in await pushReceived(push) }))
    }

    /// A chunk of a spooled diagnostic bundle, read from its file now; the last one acked removes the file. A
    /// spool file that is gone cannot be sent ever: refused.
    private func sendChunk(_ item: OutboxItemRecord, with client: any BackendAPI, token: String) async throws {
        let chunk: DiagChunkItem
        let bytes: Data
        do {
            chunk = try Codec.decode(DiagChunkItem.self, from: item.payload)
            bytes = try DurableFile.read(chunk.file, offset: chunk.offset, count: chunk.length)
        } catch {
            throw BackendClientError(refusedLocally: "the spooled diagnostic bundle cannot be read: \(error)")
        }
        _ = try await client.putDiagnosticChunk(
            requestId: chunk.requestId, index: chunk.index, count: chunk.count, sha256: chunk.sha256, bytes: bytes, token: token)
    }

    /// A chunk left the queue: after the last one (a lane sends in order, so every other chunk of the bundle left
    /// before it), the bundle's file goes, once that is on disk. (Removed when the last chunk was sent, before its
    /// completion was committed, a crash in between dead-lettered that chunk: sent again after the restart, its file
    /// was gone. A completion a power cut undoes is the same case.)
    private func chunkCompleted(_ item: OutboxItemRecord) async {
        guard let chunk = logger.valueOrLog("reading a sent chunk's item", { try Codec.decode(DiagChunkItem.self, from: item.payload) }),
              chunk.index == chunk.count - 1
        else { return }
        let store = outbox.store
        do {
            try await NIOThreadPool.singleton.runIfActive {
                try store.syncToDisk()
                try DurableFile.remove(chunk.file)
            }
        } catch {
            logger.error("the sent bundle \(chunk.file) stays until the next start: \(error)")
        }
    }

    /// Spooled bundles no queued chunk needs (sent before a crash took their removal, or refused): removed at start,
    /// before any request can be taken (a bundle being made is spooled before its chunks are queued).
    func removeUnneededBundles() {
        let directory = settings.spoolDirectory
        guard FileManager.default.fileExists(atPath: directory) else { return }
        guard let needed = logger.valueOrLog("reading the queued bundle chunks", { Set(try outbox.pendingFiles(of: .diagChunk)) }),
              let names = logger.valueOrLog("listing the bundle spool", { try FileManager.default.contentsOfDirectory(atPath: directory) })
        else { return }
        for name in names where !needed.contains(directory + "/" + name) {
            _ = logger.valueOrLog("removing the unneeded bundle \(name)") { try DurableFile.remove(directory + "/" + name) }
        }
    }

    /// A `FLEET_REQUEST` push (the only kind subscribed), taken (recorded with its answer, durably) before the push
    /// counts as handled: a power cut in between brings the push back at the next connection.
    func pushReceived(_ push: Push) async {
        if let request = push.request { await handle(request) }
    }
}
