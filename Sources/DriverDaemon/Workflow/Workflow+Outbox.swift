import BackendClient
import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials
import JSONRPC

/// The workflow owns the task lanes: transitions, proofs and the stop order. It sends them and handles their
/// outcomes (an ack confirms the task's state, a refusal puts the task back to the backend's).
extension Workflow {
    /// The kinds that change a task (transitions and proofs, by their category): whether any waits is the task's
    /// sync state (a visit's report, queued on the task's lane, is not a change of the task).
    static let taskChangeKinds = Set(OutboxItemRecord.Kind.allCases.filter { [.transition, .proof].contains($0.category) })

    /// Sends the task lanes; fetches the route again on task pushes and when the link comes back.
    nonisolated func attach(to uplink: Uplink) {
        uplink.register(.status, handler { item, client, token in
            try await client.patchStatus(taskId: item.taskId, body: item.payload, idempotencyKey: item.idempotencyKey, token: token).status
        })
        uplink.register(.podOTP, handler { item, client, token in
            _ = try await client.postOTP(taskId: item.taskId, body: item.payload, idempotencyKey: item.idempotencyKey, token: token)
            return nil
        })
        uplink.register(.podPhoto, handler { [self] item, client, token in
            _ = try await uploadPhoto(item, with: client, token: token)
            return nil
        })
        uplink.register(.route, handler { item, client, token in
            _ = try await client.putRoute(body: item.payload, token: token)
            return nil
        })
        uplink.subscribe(UplinkSubscription(
            pushes: [.taskAssigned, .routeChanged, .taskCancelled, .eta], pushed: { [self] push in await pushReceived(push) },
            linkRestored: { [self] in await requestSync() }, driverChanging: { [self] in _ = try await clearPersonalData() }))
    }

    /// A task lane's kind: sent by `send`, its outcomes handled by the workflow.
    private nonisolated func handler(
        _ send: @escaping @Sendable (OutboxItemRecord, any BackendAPI, String) async throws -> TaskStatus?
    ) -> OutboxKindHandler {
        OutboxKindHandler(
            send: send, acknowledged: { [self] item, applied in await acknowledged(item, applied: applied) },
            refused: { [self] item, refusal in await refused(item, refusal: refusal) })
    }

    /// A spooled photo, streamed with progress. A spool file that is gone cannot be sent ever: refused.
    private nonisolated func uploadPhoto(_ item: OutboxItemRecord, with client: any BackendAPI, token: String) async throws -> PODReceipt {
        let spooled: SpooledPhoto
        let bytes: Data
        do {
            spooled = try Codec.decode(SpooledPhoto.self, from: item.payload)
            bytes = try Data(contentsOf: URL(fileURLWithPath: spooled.file))
        } catch {
            throw BackendClientError(refusedLocally: "the spooled photo cannot be read: \(error)")
        }
        let hub = hub
        return try await client.postPhoto(
            taskId: item.taskId, photo: bytes, contentType: spooled.contentType, fields: spooled.formFields,
            idempotencyKey: item.idempotencyKey, token: token
        ) { sent, total in
            hub.publish(Events.podProgress, PODProgressEvent(taskId: item.taskId, sentBytes: sent, totalBytes: total))
        }
    }

    func acknowledged(_ item: OutboxItemRecord, applied appliedStatus: TaskStatus?) async {
        guard var task = tasks[item.taskId] else { return }
        switch item.kind.category {
        case .transition:
            if let appliedStatus {
                task.backendStatus = appliedStatus
                // A backend past what the unit knew (its own changes, sent before a power cut lost their record).
                if TaskWorkflow.precedes(task.status, appliedStatus) { task.status = appliedStatus }
            }
        case .proof:
            let wasAccepted = task.pod == .accepted
            task.pod = .accepted
            if !wasAccepted { publishVerdict(item, task: task.id, accepted: true, message: nil) }
        case .routeChange, .activity, .alert:
            return
        }
        // The acked item itself is still queued until this returns.
        // A queue that cannot be read counts as not empty: the task stays "pending" until a later ack or sync.
        let othersQueued = logger.valueOrLog("reading task \(task.id)'s queue") {
            try outbox.hasPendingItems(taskId: task.id, besides: item.id, kinds: Self.taskChangeKinds)
        } ?? true
        if !othersQueued, task.sync == .pending { task.sync = .synced }
        task.updatedAt = now()
        // Front ends hear the ack first (the notification is written as it is published), then it is written: the
        // write only mirrors what the backend holds (the item stays queued until this returns, and a sync restores
        // the task after a power cut).
        tasks[task.id] = task
        // An answer changes neither the task's status nor its visits: the geofences stay as they are.
        publish(task, geofencesFollow: false)
        do {
            try book.commit(task.record, detailChanged: false, item: nil)
        } catch {
            logger.error("cannot store task \(task.id): \(Store.describeWriteFailure(error))")
        }
    }

    /// A refused change: the task goes back to the backend's state (its 409 answer says which), and the
    /// task's later items, which followed from the refused one, become dead letters too.
    func refused(_ item: OutboxItemRecord, refusal: BackendRefusal) async {
        let category = item.kind.category
        switch category {
        case .routeChange:
            requestSync()
            return
        case .activity, .alert:
            // A record of where the vehicle went: refused alone (a dead letter), the task is not touched. (An
            // SOS is never refused: the uplink tries it again.)
            return
        case .transition, .proof:
            break
        }
        guard var task = tasks[item.taskId] else { return }
        let local = task.status
        if let remote = refusal.task {
            do {
                try task.setDetail(remote)
            } catch {
                logger.error("the backend's state of task \(task.id) cannot be stored: \(error)")
                return
            }
            task.backendStatus = remote.status
            task.pod = remote.podAccepted ? .accepted : task.pod
            task.failureReason = remote.failureReason
        }
        task.status = task.backendStatus
        task.sync = .rejected
        switch category {
        case .proof:
            task.pod = .rejected
            publishVerdict(item, task: task.id, accepted: false, message: refusal.message)
        case .transition, .routeChange, .activity, .alert:
            break
        }
        task.updatedAt = now()
        // Unreadable: not stored now (storing would fail too); the later items go on, and the backend judges each.
        guard let queued = logger.valueOrLog("reading task \(task.id)'s queue", { try outbox.pendingItems(taskId: task.id) }) else { return }
        let later = queued.filter { Self.taskChangeKinds.contains($0.kind) }.compactMap(\.id)
        let reason = "the backend refused an earlier change of task \(task.id): \(refusal.message)"
        do {
            try book.applySync(
                upserts: [task.record], removals: [], sequence: nil,
                deadLetters: Dictionary(uniqueKeysWithValues: later.map { ($0, reason) }), now: now())
            tasks[task.id] = task
        } catch {
            logger.error("cannot store the backend's state of task \(task.id): \(Store.describeWriteFailure(error))")
        }
        let event = TaskConflictEvent(taskId: task.id, localStatus: local, backendStatus: task.status, reason: refusal.message)
        hub.publish(Events.taskConflict, event)
        publish(task)
    }

    private func publishVerdict(_ item: OutboxItemRecord, task: String, accepted: Bool, message: String?) {
        let type: String
        switch item.kind {
        case .podPhoto: type = PODType.photo.rawValue
        case .podOTP: type = PODType.otp.rawValue
        default: return
        }
        hub.publish(Events.podVerdict, PODVerdictEvent(taskId: task, type: type, accepted: accepted, message: message))
    }
}
