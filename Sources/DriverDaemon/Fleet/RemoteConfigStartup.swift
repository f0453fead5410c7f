import DriverAPI
import BackendContract
import DriverDomain
import DriverStore
import FoundationEssentials
import JSONRPC
import Logging

/// The configuration a start runs with: the file and the command line, with the fleet's document on top (the
/// good one, or one on trial while it has not restarted too often). The start of a trial is counted durably
/// before the document is applied, so a document that crashes the daemon is given up after
/// `RemoteConfigTrial.maxStarts` starts.
struct RemoteConfigStart: Sendable {
    var layers: ConfigLayers
    var config: DaemonConfig
    /// The document version running (nil: none) and whether it is still on trial.
    var running: Int?
    var onTrial: Bool

    static func resolve(book: RemoteConfigBook, layers base: ConfigLayers, clock: DaemonClock, logger: Logger) throws -> RemoteConfigStart {
        let snapshot = try book.snapshot()
        let good = snapshot.good.flatMap { decode($0, logger) }
        var layers = base
        layers.remote = good
        var onTrial = false
        if let record = snapshot.trial {
            let boot = bootID()
            // Starts that cannot be counted end the trial as an unreadable document does.
            let earlier = logger.valueOrLog("counting remote configuration v\(record.version)'s starts") { try record.starts(inBoot: boot) }
            let trial = earlier == nil ? nil : decode(record, logger)
            switch (trial, RemoteConfigTrial.decide(trial: record.version, good: good?.version, earlierStarts: earlier ?? [], now: clock.monotonic)) {
            case (let trial?, .run):
                _ = try book.recordStart(version: record.version, boot: boot, at: clock.monotonic)
                layers.remote = trial
                onTrial = true
                logger.notice("running remote configuration v\(record.version) on trial (start \((earlier?.count ?? 0) + 1) of \(RemoteConfigTrial.maxStarts))")
            case (nil, _), (_, .rollBack):
                let reason = trial == nil
                    ? "the stored document or its count of starts cannot be read"
                    : "\(RemoteConfigTrial.maxStarts) starts within \(Int(RemoteConfigTrial.window / 60)) minutes without a healthy run"
                try book.giveUp(version: record.version, ack: ack(ConfigAck(
                    version: record.version, status: .rolledBack, reason: reason, runningVersion: good?.version, at: clock.now().time), payload: record.payload))
                logger.error("remote configuration v\(record.version) given up (\(reason)): back to \(good.map { "v\($0.version)" } ?? "the file alone")")
            }
        }
        var parsed = layers.parse()
        if !parsed.errors.isEmpty, let remote = layers.remote {
            // The file changed under the document (a key the document relies on is now invalid): the file wins.
            logger.error("remote configuration v\(remote.version) no longer fits this unit's file (\(parsed.errors.map(\.description).joined(separator: "; "))): running without it")
            layers.remote = nil
            onTrial = false
            parsed = layers.parse()
        }
        return RemoteConfigStart(layers: layers, config: parsed.config, running: layers.remote?.version, onTrial: onTrial)
    }

    /// The acknowledgement of a document, for the outbox (keyed by version, answer and the document's bytes).
    static func ack(_ ack: ConfigAck, payload: Data) throws -> OutboxItemRecord {
        OutboxItemRecord(
            kind: .configAck, taskId: TaskRecord.configLane,
            idempotencyKey: "config-v\(ack.version)-\(ack.status.rawValue.lowercased())-\(FleetSignature.digest(payload))",
            payload: try Data(Codec.encode(ack)), createdAt: ack.at)
    }

    private static func decode(_ record: RemoteConfigRecord, _ logger: Logger) -> RemoteConfigDocument? {
        do {
            return try Codec.decode(RemoteConfigDocument.self, from: record.payload)
        } catch {
            logger.error("stored remote configuration v\(record.version) cannot be read: \(error)")
            return nil
        }
    }

    /// This boot's id: starts counted in another boot are not a restart loop.
    static func bootID() -> String {
        // Expected to fail only off Linux (no /proc): every start then counts, as if in one boot.
        (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?.trimmingWhitespace() ?? "unknown"
    }
}
