import DriverAPI
import BackendContract
import DriverDomain

extension SimWorld {
    /// Stores a batch once per batch id (every copy is acked), and the earlier batches it carries first, each as if sent
    /// alone; each ping counts once per driver, time and position. May produce an ETA push, at most one per
    /// `etaPushSeconds` per driver.
    public mutating func ingest(batch: LocationBatch, driverId: String, now: Double, overWebSocket: Bool = false) -> (ack: BatchAck, push: Push?) {
        let carried = batch.carried?.map { store(batch: $0, driverId: driverId, now: now, overWebSocket: overWebSocket).ack }
        var (ack, push) = store(batch: batch, driverId: driverId, now: now, overWebSocket: overWebSocket)
        ack.carried = carried
        return (ack, push)
    }

    private mutating func store(batch: LocationBatch, driverId: String, now: Double, overWebSocket: Bool) -> (ack: BatchAck, push: Push?) {
        // A copy sent again is a report too: the unit is there.
        lastReportAt[driverId] = now
        nextReportDue[driverId] = batch.nextBatchWithin.map { now + $0 }
        guard batchIDs.insert(batch.batchId).inserted else {
            stats.duplicateBatches += 1
            stats.duplicateRequests += 1
            return (BatchAck(batchId: batch.batchId, received: batch.pings.count, unique: 0, duplicate: true), nil)
        }
        if let heartbeat = batch.heartbeat {
            stats.heartbeats += 1
            heartbeats[driverId, default: []].append(heartbeat)
            if let count = heartbeats[driverId]?.count, count > 1000 { heartbeats[driverId]?.removeFirst(count - 1000) }
        }
        // A heartbeat alone is no ping batch: the batch counters and log are the pings'.
        guard let oldest = batch.pings.map(\.timestamp).min(), let newest = batch.pings.map(\.timestamp).max() else {
            return (BatchAck(batchId: batch.batchId, received: 0, unique: 0, duplicate: false), nil)
        }
        stats.batches += 1
        if overWebSocket { stats.webSocketBatches += 1 }
        stats.pingsReceived += batch.pings.count
        stats.batchLog.append(.init(batchId: batch.batchId, pings: batch.pings.count, oldest: oldest, newest: newest, time: now))
        if stats.batchLog.count > 10_000 { stats.batchLog.removeFirst(stats.batchLog.count - 10_000) }
        var unique = 0
        for ping in batch.pings where pingKeys.insert("\(driverId)|\(ping.timestamp)|\(ping.lat)|\(ping.lng)").inserted {
            unique += 1
            received[driverId, default: []].append(ping)
        }
        if let count = received[driverId]?.count, count > Self.receivedKept { received[driverId]?.removeFirst(count - Self.receivedKept) }
        stats.uniquePings += unique
        // The live pings (newer than the last position; a backlog comes after the live one) say whether it stands.
        let live = batch.pings.filter { $0.timestamp > lastPosition[driverId]?.timestamp ?? -.infinity }.sorted { $0.timestamp < $1.timestamp }
        for ping in live {
            if (ping.speed ?? 0) >= Self.parkedSpeed {
                parkedSince[driverId] = nil
            } else if parkedSince[driverId] == nil {
                parkedSince[driverId] = ping.timestamp
            }
        }
        if let newest = batch.pings.max(by: { $0.timestamp < $1.timestamp }),
           newest.timestamp >= (lastPosition[driverId]?.timestamp ?? -.infinity) {
            lastPosition[driverId] = newest
        }
        return (BatchAck(batchId: batch.batchId, received: batch.pings.count, unique: unique, duplicate: false), etaPush(driverId: driverId, now: now))
    }

    /// Below this speed (m/s) a ping is a van standing (a receiver's Doppler speed while parked is centimetres a second).
    static let parkedSpeed = 1.0

    /// Unique pings kept per driver for `/sim/drivers/{id}/locations` (the newest).
    static let receivedKept = 200_000

    /// What a driver's unit sent: unique pings in arrival order and heartbeats, and whether it is present (its last
    /// report, and the next due by its own cadence).
    public func locations(driverId: String) -> DriverLocations {
        DriverLocations(
            pings: received[driverId] ?? [], heartbeats: heartbeats[driverId] ?? [], lastPosition: lastPosition[driverId],
            parkedSince: parkedSince[driverId], lastReportAt: lastReportAt[driverId], nextReportDue: nextReportDue[driverId])
    }

    private mutating func etaPush(driverId: String, now: Double) -> Push? {
        guard now - (lastETAPush[driverId] ?? -.infinity) >= etaPushSeconds,
              let nextStop = sequence(driverId: driverId).first(where: { !isDone(stopId: $0) }),
              let taskId = Stop.parse(nextStop)?.taskId,
              let eta = eta(taskId: taskId, driverId: driverId, now: now), let seconds = eta.etaSeconds
        else { return nil }
        lastETAPush[driverId] = now
        return push(.eta, driverId: driverId, taskId: taskId, etaSeconds: seconds, now: now)
    }

    private func isDone(stopId: String) -> Bool {
        guard let (taskId, kind) = Stop.parse(stopId), let record = tasks[taskId] else { return true }
        return kind == .pickup && !Self.headingToPickup.contains(record.task.status)
    }

    private static let headingToPickup: Set<TaskStatus> = [.assigned, .accepted, .arrivedAtStore]

    /// Time to the task's next stop from the driver's last received position: great-circle distance over the
    /// scenario's speed. nil when the task is not the driver's; `etaSeconds` nil without a position or for a
    /// finished task.
    public func eta(taskId: String, driverId: String, now: Double) -> ETAResponse? {
        guard let record = record(taskId: taskId, driverId: driverId) else { return nil }
        let task = record.task
        let towardsPickup = Self.headingToPickup.contains(task.status)
        let stop = towardsPickup ? task.pickup : task.dropoff
        let stopId = Stop.id(taskId: taskId, kind: towardsPickup ? .pickup : .dropoff)
        guard !task.status.isTerminal, let position = lastPosition[driverId] else {
            return ETAResponse(taskId: taskId, stopId: stopId, etaSeconds: nil, distanceMeters: nil, positionTimestamp: nil, computedAt: now)
        }
        let metres = Geo.distance(latitude1: position.lat, longitude1: position.lng, latitude2: stop.lat, longitude2: stop.lng)
        return ETAResponse(
            taskId: taskId, stopId: stopId, etaSeconds: metres / etaSpeed, distanceMeters: metres,
            positionTimestamp: position.timestamp, computedAt: now)
    }
}

/// `GET /sim/drivers/{driverId}/locations`: the evidence of what a unit sent.
public struct DriverLocations: Codable, Sendable, Equatable {
    public var pings: [LocationPing]
    public var heartbeats: [UnitHeartbeat]
    /// The newest ping by fix time: where the van is.
    public var lastPosition: LocationPing?
    /// The fix time since which the van stands (nil while it moves): a dispatcher's "parked since".
    public var parkedSince: Double?
    /// The simulator's clock (seconds since 1970) at the unit's last batch or heartbeat.
    public var lastReportAt: Double?
    /// When the next is due by the cadence the unit told; nil when it told none (off shift, an older unit).
    public var nextReportDue: Double?
}
