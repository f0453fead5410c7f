import BackendClient
import BackendContract
import DriverAPI
import DriverDomain
import DriverStore
import FoundationEssentials
import Synchronization

/// Ping batches and the heartbeat: the live position from memory first, then the backlog on disk, oldest first.
extension Uplink {
    /// Pings in batches: those in memory first, once (the live position, with lost batches), then what waits on disk,
    /// oldest first.
    func sendPings(token: String) async throws {
        guard onShift() || state.withLock({ $0.shiftEndFlush }) else { return }
        let liveSent = try await sendHeldBatches(token: token)
        for _ in 0..<Self.batchesPerAttempt {
            // What was queued meanwhile does not wait behind the backlog: one batch at most.
            if itemsQueued.load(ordering: .acquiring) {
                try await unlessStoreFails("sending the queued items") { try await self.sendItems(upTo: .normal, token: token) }
            }
            // The backlog on disk needs the disk (a claim is a write): a store that cannot write keeps it for later.
            let claimed: Outbox.PingBatch?
            do {
                claimed = try outbox.claimPingBatch(maxPings: Self.maxPings, liveSent: liveSent, newBatchId: { RandomID.uuid() })
            } catch where StoreHealth.condition(of: error) != nil {
                logger.debug("the ping backlog waits: \(Store.describeWriteFailure(error))")
                claimed = nil
            }
            guard let batch = claimed else {
                try await sendHeartbeatIfDue(token: token)
                return
            }
            try await send(locationBatch(batch.batchId, pings: batch.pings.map(Self.locationPing)), token: token)
            state.withLock { $0.machine.pingsSent(now: now) }
            guard try ackOnDisk(batch.batchId) else { return }
        }
    }

    /// The live position as one request: the pings held in memory as a batch, carrying the batches lost before it (in
    /// memory, and on disk where their window wrote them), each under its own id, so a lost batch costs no request of its
    /// own and one that did arrive is stored once; and pings on disk that no turn took yet (after a failed attempt), as
    /// far as the request has room. With nothing in memory (a group commit wrote it all), what is on disk goes so only
    /// when all of it fits: a longer backlog leaves the newest ping to go first (`Outbox.claimPingBatch`). Returns
    /// whether a request went.
    @discardableResult
    func sendHeldBatches(token: String) async throws -> Bool {
        guard let recorder else { return false }
        let carrying = state.withLock { $0.backendTakesCarried }
        let held = recorder.claimBatches(maxPings: Self.maxPings, carrying: carrying, newBatchId: { RandomID.uuid() })
        var onDisk: [Outbox.PingBatch] = []
        if carrying {
            do {
                onDisk = try outbox.claimBatchesToCarry(
                    maxPings: Self.maxPings - held.reduce(0) { $0 + $1.pings.count }, excluding: Set(held.map(\.batchId)),
                    onlyIfAllFit: held.isEmpty, newBatchId: { RandomID.uuid() })
            } catch where StoreHealth.condition(of: error) != nil {
                logger.debug("the pings on disk wait for their own turn: \(Store.describeWriteFailure(error))")
            }
        }
        let batches = onDisk + held
        guard let live = batches.last else { return false }
        let carried = batches.dropLast().map { LocationBatch(batchId: $0.batchId, pings: $0.pings.map(Self.locationPing)) }
        let ack: BatchAck
        do {
            ack = try await send(locationBatch(live.batchId, pings: live.pings.map(Self.locationPing), carried: carried), token: token)
        } catch {
            recorder.sent(acknowledged: [])
            throw error
        }
        let acknowledged = Set([ack.batchId] + (ack.carried ?? []).map(\.batchId))
        recorder.sent(acknowledged: acknowledged)
        state.withLock { $0.machine.pingsSent(now: now) }
        for batch in onDisk where acknowledged.contains(batch.batchId) { _ = try ackOnDisk(batch.batchId) }
        if !carried.isEmpty, ack.carried == nil {
            // Not stored: the disk's go alone in this attempt's backlog turn, memory's at the next turn.
            state.withLock { $0.backendTakesCarried = false }
            logger.notice("the backend does not take lost batches with the next one (carried): each goes alone")
        }
        return true
    }

    /// An acked batch's rows leave the disk. Returns false when the disk takes no writes: the rows stay, and go again as
    /// the same batch once it does (the backend stores it once).
    private func ackOnDisk(_ batchId: String) throws -> Bool {
        do {
            try outbox.ackPingBatch(batchId)
            return true
        } catch where StoreHealth.condition(of: error) != nil {
            logger.debug("batch \(batchId) was delivered; its rows stay until the disk takes writes: \(Store.describeWriteFailure(error))")
            return false
        }
    }

    /// A batch that tells the backend when the next is due (its cadence's interval; none after the shift).
    private func locationBatch(
        _ batchId: String, pings: [LocationPing], heartbeat: UnitHeartbeat? = nil, carried: [LocationBatch] = []
    ) -> LocationBatch {
        let cadence = self.cadence()
        let within = onShift() ? state.withLock { $0.machine.interval(cadence) } : nil
        return LocationBatch(
            batchId: batchId, pings: pings, heartbeat: heartbeat, nextBatchWithin: within, carried: carried.isEmpty ? nil : carried)
    }

    /// While the receiver has no usable fix, the backend hears so at once and every minute instead of nothing
    /// (or an old position): a batch without pings, with the unit's GPS state and its time stamp.
    func sendHeartbeatIfDue(token: String) async throws {
        let cadence = self.cadence()
        guard onShift(), let heartbeat = heartbeat(), let gps = GPSLinkState(rawValue: heartbeat.gps),
              state.withLock({ $0.machine.heartbeatDue(now: now, gps: gps, cadence: cadence) })
        else { return }
        try await send(locationBatch(RandomID.uuid(), pings: [], heartbeat: heartbeat), token: token)
        state.withLock { $0.machine.heartbeatSent(now: now, gps: gps) }
        logger.debug("heartbeat sent", metadata: ["gps": "\(heartbeat.gps)"])
    }

    /// One location batch, over the WebSocket when it is open and the link is not lossy, else HTTPS; throws unless the
    /// backend acked it. A frame lost on the socket is a lost request: the batch goes again under its id (stored once if
    /// the frame arrived after all), and the link's batches go as requests a while.
    @discardableResult
    func send(_ request: LocationBatch, token: String) async throws -> BatchAck {
        let ack: BatchAck
        if let webSocket, webSocket.isConnected, state.withLock({ $0.machine.batchesOverSocket(now: now) }) {
            do {
                ack = try await webSocket.send(request)
            } catch {
                guard !error.isLostRequest else { throw error }
                // The socket closed before the frame went: nothing was lost, so HTTPS carries it now.
                ack = try await client.postLocations(request, token: token)
            }
        } else {
            ack = try await client.postLocations(request, token: token)
        }
        guard ack.batchId == request.batchId else { throw BackendClientError.unexpected("ack for \(ack.batchId), sent \(request.batchId)") }
        state.withLock { $0.machine.requestDelivered() }
        return ack
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
