import BackendContract
import DriverAPI
import DriverStore
import FoundationEssentials
import Logging

/// The update desk's answers to the fleet's releases (REFUSED, DOWNLOADED, and driverd-update's verdicts), on the
/// outbox's release lane.
struct UpdateAnswers: Sendable {
    let outbox: Outbox
    let logger: Logger

    /// Queues an answer to the backend (durably, once per key ever). Its key names the release and the answer by a
    /// digest, so a repeat is one, and it stays within the contract's 128 characters whatever the version.
    func queue(_ ack: UpdateAck, key: String) {
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
}
