import BackendClient
import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials
import Synchronization

/// What one attempt sends: items in order per task and by priority, ping batches, the heartbeat.
extension Uplink {
    /// The head of each task's queue of `maxPriority` or higher, most urgent first, again until none is left.
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
        do {
            var appliedStatus: TaskStatus?
            switch item.kind {
            case .status:
                appliedStatus = try await client.patchStatus(
                    taskId: item.taskId, body: item.payload, idempotencyKey: item.idempotencyKey, token: token).status
            case .podOTP:
                _ = try await client.postOTP(taskId: item.taskId, body: item.payload, idempotencyKey: item.idempotencyKey, token: token)
            case .podPhoto:
                _ = try await uploadPhoto(item, token: token)
            case .route:
                _ = try await client.putRoute(body: item.payload, token: token)
            case .visit:
                _ = try await client.postVisit(body: item.payload, idempotencyKey: item.idempotencyKey, token: token)
            case .trip:
                _ = try await client.postActivity(path: BackendPaths.trips, body: item.payload, idempotencyKey: item.idempotencyKey, token: token)
            case .idle:
                _ = try await client.postActivity(path: BackendPaths.idles, body: item.payload, idempotencyKey: item.idempotencyKey, token: token)
            case .harsh:
                _ = try await client.postActivity(
                    path: BackendPaths.harshEvents, body: item.payload, idempotencyKey: item.idempotencyKey, token: token)
            case .sos:
                _ = try await client.postActivity(path: BackendPaths.sos, body: item.payload, idempotencyKey: item.idempotencyKey, token: token)
            case .configAck:
                _ = try await client.postActivity(path: BackendPaths.configAcks, body: item.payload, idempotencyKey: item.idempotencyKey, token: token)
            case .fleetAck:
                _ = try await client.postActivity(path: BackendPaths.requestAcks, body: item.payload, idempotencyKey: item.idempotencyKey, token: token)
            case .diagChunk:
                try await sendChunk(item, token: token)
            }
            // The task learns the answer while its item still counts as queued, then the item goes: a sync
            // merged in between sees the queue or the confirmed status, never a gap that looks like neither.
            await observer?.itemAcked(item, appliedStatus: appliedStatus)
            try outbox.complete(itemId: id)
        } catch let error as BackendClientError where error.errorClass == .refused && item.kind.category == .alert {
            // Someone may be in danger: an SOS is never dropped as a dead letter; tried again like a lost request.
            try? outbox.recordFailure(itemId: id, error: error.reason)
            logger.error("the backend refused an SOS; trying again", metadata: ["status": "\(error.status ?? 0)"])
            throw BackendClientError.unexpected("the backend refused the SOS (\(error.status ?? 0)): \(error.reason)")
        } catch let error as BackendClientError where error.errorClass == .refused {
            let refusal = BackendRefusal(error)
            if let applied = Self.appliedEarlier(item, refusal) {
                // The unit's own change coming back (it lost its record of sending it): acknowledged, not refused.
                logger.notice(
                    "the backend already has the queued \(applied.rawValue) of task \(item.taskId): taken as acknowledged",
                    metadata: ["status": "\(error.status ?? 0)"])
                await observer?.itemAcked(item, appliedStatus: applied)
                try outbox.complete(itemId: id)
                return
            }
            // Never retried: kept with the backend's answer, and front ends are told.
            let answer = error.rawBody.isEmpty ? error.reason : error.rawBody
            try outbox.deadLetter(itemId: id, answer: answer, now: clock.now().time)
            hub.publish(Events.outboxRefused, OutboxRefusedEvent(
                taskId: item.taskId, kind: item.kind.rawValue, idempotencyKey: item.idempotencyKey, status: error.status ?? 0, answer: answer))
            await observer?.itemRefused(item, refusal: refusal)
            logger.warning(
                "the backend refused a queued \(item.kind.rawValue) for task \(item.taskId)",
                metadata: [DaemonLogHandler.messageIDKey: "\(MessageID.outboxRefused.rawValue)", "status": "\(error.status ?? 0)"])
        } catch let error as BackendClientError {
            try? outbox.recordFailure(itemId: id, error: error.reason)
            throw error
        }
    }

    /// The backend's status of the task when its refusal of a transition says it already has that change.
    static func appliedEarlier(_ item: OutboxItemRecord, _ refusal: BackendRefusal) -> TaskStatus? {
        guard let target = item.transitionStatus, let backend = refusal.task?.status,
              TaskSync.alreadyApplied(target: target, backend: backend)
        else { return nil }
        return backend
    }

    /// A chunk of a spooled diagnostic bundle, read from its file now; the last one acked removes the file. A
    /// spool file that is gone cannot be sent ever: refused.
    func sendChunk(_ item: OutboxItemRecord, token: String) async throws {
        let chunk: DiagChunkItem
        let bytes: Data
        do {
            chunk = try JSONDecoder().decode(DiagChunkItem.self, from: item.payload)
            bytes = try DurableFile.read(chunk.file, offset: chunk.offset, count: chunk.length)
        } catch {
            throw BackendClientError(refusedLocally: "the spooled diagnostic bundle cannot be read: \(error)")
        }
        _ = try await client.putDiagnosticChunk(
            requestId: chunk.requestId, index: chunk.index, count: chunk.count, sha256: chunk.sha256, bytes: bytes, token: token)
        if chunk.index == chunk.count - 1 { try? FileManager.default.removeItem(atPath: chunk.file) }
    }

    /// A spooled photo, streamed with progress. A spool file that is gone cannot be sent ever: refused.
    func uploadPhoto(_ item: OutboxItemRecord, token: String) async throws -> PODReceipt {
        let spooled: SpooledPhoto
        let bytes: Data
        do {
            spooled = try JSONDecoder().decode(SpooledPhoto.self, from: item.payload)
            bytes = try Data(contentsOf: URL(fileURLWithPath: spooled.file))
        } catch {
            throw BackendClientError(refusedLocally: "the spooled photo cannot be read: \(error)")
        }
        let observer = observer
        return try await client.postPhoto(
            taskId: item.taskId, photo: bytes, contentType: spooled.contentType, fields: spooled.formFields,
            idempotencyKey: item.idempotencyKey, token: token
        ) { sent, total in observer?.uploadProgress(item, sent: sent, total: total) }
    }

    /// Pings in batches: those in memory first, once (the live position), then what waits on disk, oldest first.
    func sendPings(token: String) async throws {
        guard onShift() || state.withLock({ $0.shiftEndFlush }) else { return }
        if let batch = recorder?.claimBatch(maxPings: Self.maxPings, newBatchId: { RandomID.uuid() }) {
            do {
                try await send(LocationBatch(batchId: batch.batchId, pings: batch.pings.map(Self.locationPing)), token: token)
            } catch {
                recorder?.sendFailed(batch.batchId)
                throw error
            }
            recorder?.acknowledged(batch.batchId)
            state.withLock { $0.machine.pingsSent(now: now) }
        }
        for _ in 0..<Self.batchesPerAttempt {
            // What was queued meanwhile does not wait behind the backlog: one batch at most.
            if itemsQueued.load(ordering: .acquiring) { try await sendItems(upTo: .normal, token: token) }
            guard let batch = try outbox.claimPingBatch(maxPings: Self.maxPings, newBatchId: { RandomID.uuid() }) else {
                try await sendHeartbeatIfDue(token: token)
                return
            }
            try await send(LocationBatch(batchId: batch.batchId, pings: batch.pings.map(Self.locationPing)), token: token)
            try outbox.ackPingBatch(batch.batchId)
            state.withLock { $0.machine.pingsSent(now: now) }
        }
    }

    /// While the receiver has no usable fix, the backend hears so at once and every minute instead of nothing
    /// (or an old position): a batch without pings, with the unit's GPS state and its time stamp.
    func sendHeartbeatIfDue(token: String) async throws {
        guard onShift(), let heartbeat = heartbeat(), let gps = GPSLinkState(rawValue: heartbeat.gps),
              state.withLock({ $0.machine.heartbeatDue(now: now, gps: gps) })
        else { return }
        try await send(LocationBatch(batchId: RandomID.uuid(), pings: [], heartbeat: heartbeat), token: token)
        state.withLock { $0.machine.heartbeatSent(now: now, gps: gps) }
        logger.debug("heartbeat sent", metadata: ["gps": "\(heartbeat.gps)"])
    }

    /// One location batch, over the WebSocket when it is open, else HTTPS; throws unless the backend acked it.
    func send(_ request: LocationBatch, token: String) async throws {
        let ack: BatchAck
        if let webSocket, webSocket.isConnected, let viaSocket = try? await webSocket.send(request) {
            ack = viaSocket
        } else {
            // The same batch id over HTTPS: if the WebSocket copy arrived after all, it is stored once.
            ack = try await client.postLocations(request, token: token)
        }
        guard ack.batchId == request.batchId else { throw BackendClientError.unexpected("ack for \(ack.batchId), sent \(request.batchId)") }
    }

    /// A recorded ping as sent: coordinates to 1e-7 degrees (about a centimetre), the rest to what a receiver
    /// actually resolves, so a batch carries no noise digits.
    static func locationPing(_ ping: PingRecord) -> LocationPing {
        func round(_ value: Double, _ digits: Double) -> Double { (value * digits).rounded() / digits }
        return LocationPing(
            lat: round(ping.latitude, 1e7), lng: round(ping.longitude, 1e7), accuracy: ping.horizontalError.map { round($0, 10) },
            speed: ping.speed.map { round($0, 100) }, heading: ping.track.map { round($0, 10) }, timestamp: round(ping.fixTime, 1000))
    }
}
