import BackendClient
import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials
import Synchronization

/// Queued items: the head of each lane, most urgent first, sent by the kind's owner; the outcome decided by
/// `OutboxOutcomePolicy`, performed here, and told to the owner.
extension Uplink {
    /// The head of each lane of `maxPriority` or higher, most urgent first, again until none is left.
    func sendItems(upTo maxPriority: OutboxItemRecord.Priority, token: String) async throws {
        guard !itemsHeld else { return }
        while true {
            itemsQueued.store(false, ordering: .relaxed)
            let items = try outbox.headItems(upTo: maxPriority)
            guard !items.isEmpty else { return }
            for item in items { try await send(item, token: token) }
        }
    }

    func send(_ item: OutboxItemRecord, token: String) async throws {
        guard let id = item.id else { return }
        guard let handler = handler(of: item.kind) else {
            // A kind nobody in this build sends (every kind has an owner in `DaemonAssembly`): kept for a build that does.
            logger.error("no owner sends queued \(item.kind.rawValue) items; kept")
            throw BackendClientError.unexpected("no owner for \(item.kind.rawValue) items")
        }
        let answer: OutboxOutcomePolicy.Answer
        var refusal: BackendRefusal?
        var failure: BackendClientError?
        do {
            answer = .accepted(applied: try await handler.send(item, client, token))
        } catch let error as BackendClientError where error.errorClass == .refused {
            refusal = BackendRefusal(error)
            failure = error
            answer = .refused(backendStatus: refusal?.task?.status)
        } catch let error as BackendClientError {
            failure = error
            answer = .notDelivered
        }
        // The queued body is read only when a refusal needs it.
        let target = if case .refused = answer { item.transitionStatus } else { TaskStatus?.none }
        switch OutboxOutcomePolicy.decide(answer, category: item.kind.category, target: target) {
        case .acknowledge(let applied):
            if case .refused = answer {
                // The unit's own change coming back (it lost its record of sending it): acknowledged, not refused.
                logger.notice(
                    "the backend already has the queued \(applied?.rawValue ?? item.kind.rawValue) of task \(item.taskId): taken as acknowledged",
                    metadata: ["status": "\(failure?.status ?? 0)"])
            }
            await handler.acknowledged(item, applied)
            try outbox.complete(itemId: id)
            await handler.completed(item)
        case .deadLetter:
            guard let failure, let refusal else { return }
            // Never retried: kept with the backend's answer, and front ends are told.
            let answer = failure.rawBody.isEmpty ? failure.reason : failure.rawBody
            try outbox.deadLetter(itemId: id, answer: answer, now: clock.now().time)
            hub.publish(Events.outboxRefused, OutboxRefusedEvent(
                taskId: item.taskId, kind: item.kind.rawValue, idempotencyKey: item.idempotencyKey, status: failure.status ?? 0, answer: answer))
            await handler.refused(item, refusal)
            logger.warning(
                "the backend refused a queued \(item.kind.rawValue) for task \(item.taskId)",
                metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.outboxRefused.rawValue)", "status": "\(failure.status ?? 0)"])
        case .retryRefused:
            guard let failure else { return }
            // Someone may be in danger: tried again like a lost request.
            recordFailure(itemId: id, failure.reason)
            logger.error("the backend refused an SOS; trying again", metadata: ["status": "\(failure.status ?? 0)"])
            throw BackendClientError.unexpected("the backend refused the SOS (\(failure.status ?? 0)): \(failure.reason)")
        case .retry:
            guard let failure else { return }
            recordFailure(itemId: id, failure.reason)
            throw failure
        }
    }

    /// The attempt count and last error shown by `outbox.status`: informative, so a failure to store them is logged
    /// and the retry goes on.
    private func recordFailure(itemId: Int64, _ reason: String) {
        do {
            try outbox.recordFailure(itemId: itemId, error: reason)
        } catch {
            logger.error("cannot record a failed send of item \(itemId): \(Store.describeWriteFailure(error))")
        }
    }
}
