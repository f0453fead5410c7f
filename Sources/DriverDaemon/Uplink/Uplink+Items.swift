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
            let items = try outbox.headItems(upTo: maxPriority, excluding: unrecordedCompletionIds)
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
            state.withLock { $0.machine.requestDelivered() }
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
            do {
                try outbox.complete(itemId: id)
            } catch where StoreHealth.condition(of: error) != nil {
                // The backend has it, the disk cannot say so yet: kept in memory, recorded when it can.
                state.withLock { $0.unrecordedCompletions[id] = item }
                logger.warning("item \(id) was delivered; its completion waits in memory: \(Store.describeWriteFailure(error))")
                return
            }
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

    var unrecordedCompletionIds: Set<Int64> { state.withLock { Set($0.unrecordedCompletions.keys) } }

    /// Records the completions the store could not record before (at each attempt: on the uplink's cadence, never in a
    /// loop of its own); the owner hears `completed` once its item has left the queue.
    func recordCompletions() async {
        for (id, item) in state.withLock({ $0.unrecordedCompletions }).sorted(by: { $0.key < $1.key }) {
            do {
                try outbox.complete(itemId: id)
            } catch {
                return
            }
            state.withLock { _ = $0.unrecordedCompletions.removeValue(forKey: id) }
            if let handler = handler(of: item.kind) { await handler.completed(item) }
        }
    }

    /// Runs `part` of an attempt; a failure of the store (full, read-only, failing: `StoreHealth` has said it) ends
    /// that part only, so what needs no disk still goes. Any other failure ends the attempt.
    func unlessStoreFails(_ part: String, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch where StoreHealth.condition(of: error) != nil {
            logger.debug("\(part) stopped: \(Store.describeWriteFailure(error))")
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
