import SQLiteKit
import FoundationEssentials
import Synchronization

/// The durable outbox: transitions and proofs of delivery (`outbox_item`, in order per task) and pings
/// (`ping`, sent in batches whose ids are stored before sending, so a batch resent after a crash is the same
/// batch and the backend stores it once). Rows leave only when the backend acks them.
public final class Outbox: Sendable {
    public let store: Store
    /// The last depth read and when (monotonic seconds), for status snapshots that may be a second old.
    private let recent = Mutex<(depth: Depth, at: ContinuousClock.Instant)?>(nil)

    public init(store: Store) { self.store = store }

    /// A batch of pings to send: the newest unsent ping (the live position) and the oldest backlog.
    public struct PingBatch: Sendable, Equatable {
        public var batchId: String
        public var pings: [PingRecord]
    }

    /// Queue depths for `outbox.status`.
    public struct Depth: Sendable, Equatable {
        public var transitions = 0
        public var proofs = 0
        /// New stop orders for the backend.
        public var routeChanges = 0
        /// Visits to stops, trips and idle periods for the backend.
        public var activity = 0
        /// SOS calls not yet acked.
        public var sos = 0
        public var pings = 0
        public var dead = 0
        /// Transitions, proofs, route changes, activity records and SOS calls: what is never dropped.
        public var items: Int { transitions + proofs + routeChanges + activity + sos }
        /// Unix seconds of the oldest pending row (item or ping).
        public var oldestPending: Double?
        /// Pending items by kind (a kind this release does not know is not among them).
        public var byKind: [OutboxItemRecord.Kind: Int] = [:]

        public init() {}
    }

    // MARK: Transitions and proofs of delivery

    /// Commits an item with `synchronous = FULL` before returning: once this returns, a power cut cannot
    /// lose it.
    @discardableResult
    public func enqueue(_ item: OutboxItemRecord) throws -> OutboxItemRecord {
        try store.writeDurably { db in
            var item = item
            item.id = try item.insertItem(db)
            return item
        }
    }

    /// Commits `item` in place of the pending items of its kind in its lane (a newer report replaces one not sent yet),
    /// durably, in one transaction, never from the driver's reserve. A disk that refuses it (the report that says so):
    /// held in memory in place of an older one held, and sent from there (`enqueueKeepingInMemory`). One being sent
    /// meanwhile is sent all the same; its completion finds it gone. Returns whether it is on disk.
    @discardableResult
    public func enqueueReplacing(_ item: OutboxItemRecord) throws -> Bool {
        do {
            try store.writeDurably(usingReserve: false) { db in
                try db.execute(
                    sql: "DELETE FROM outbox_item WHERE kind = ? AND task_id = ? AND state = ?",
                    arguments: [item.kind.rawValue, item.taskId, OutboxItemRecord.State.pending.rawValue])
                _ = try item.insertItem(db)
            }
            store.unsavedItems.withLock { $0.items.removeAll { $0.kind == item.kind && $0.taskId == item.taskId } }
            return true
        } catch where StoreHealth.condition(of: error) != nil {
            store.unsavedItems.withLock { $0.items.removeAll { $0.kind == item.kind && $0.taskId == item.taskId } }
            hold(item)
            return false
        }
    }

    /// Commits an item that must go even when the disk refuses it (an SOS): durably when it can (the reserve too), else
    /// kept in memory and sent from there, and written as soon as the disk takes it. Returns whether it is on disk.
    /// An item in memory is lost if the process ends before the backend has it: the caller says so.
    public func enqueueKeepingInMemory(_ item: OutboxItemRecord) throws -> (item: OutboxItemRecord, saved: Bool) {
        do {
            return (try enqueue(item), true)
        } catch where StoreHealth.condition(of: error) != nil {
            return (hold(item), false)
        }
    }

    /// Holds `item` in memory under an id below zero, to be sent from there; the sender hears of it.
    @discardableResult
    private func hold(_ item: OutboxItemRecord) -> OutboxItemRecord {
        let held = store.unsavedItems.withLock { unsaved -> OutboxItemRecord in
            var held = item
            held.id = unsaved.nextId
            unsaved.nextId -= 1
            unsaved.items.append(held)
            return held
        }
        store.announceUnsaved()
        return held
    }

    /// Items held in memory that the disk now takes are written (their ids become real ones); the rest stay.
    private func keepUnsaved() -> [OutboxItemRecord] {
        let held = store.unsavedItems.withLock { $0.items }
        guard !held.isEmpty else { return [] }
        guard store.health.canSave else { return held }
        var written: [Int64?] = []
        // A health report goes from memory: the next one is queued on disk anyway.
        for item in held where item.kind != .health {
            var stored = item
            stored.id = nil
            do {
                try enqueue(stored)
                written.append(item.id)
            } catch {
                break
            }
        }
        return store.unsavedItems.withLock { unsaved in
            unsaved.items.removeAll { written.contains($0.id) }
            return unsaved.items
        }
    }

    /// Queues an answer to an offer the backend may make again (a document or a release refused), durably, once per
    /// key ever: the backend keeps a key's first body, and the same key with another body (a new time after a
    /// restart) is refused for good. False, and nothing queued, when that answer was queued before. The keys are kept
    /// for good (one row per offer refused, a handful a year): a key forgotten could be answered again with another body.
    @discardableResult
    public func enqueueAnswerOnce(_ item: OutboxItemRecord) throws -> Bool {
        try store.writeDurably { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO answered_offer (idempotency_key, answered_at) VALUES (?, ?)",
                arguments: [item.idempotencyKey, item.createdAt])
            guard db.changesCount == 1 else { return false }
            _ = try item.insertItem(db)
            return true
        }
    }

    /// The next item of each task (the oldest pending one) whose priority is `maxPriority` or higher, most
    /// urgent first, then oldest first: a task's next item waits for its previous one's answer. (A lane holds
    /// one priority: a task's transitions, proofs and visits; the route's changes; activity; SOS calls.)
    /// - Parameter excluding: items already acknowledged whose completion the store could not record yet (the uplink
    ///   keeps them in memory): the next item of their task is the head.
    public func headItems(upTo maxPriority: OutboxItemRecord.Priority = .low, excluding: Set<Int64> = []) throws -> [OutboxItemRecord] {
        // Asked right after an item is committed (the uplink is woken by it): on the writer's warm cache.
        let excluded = excluding.isEmpty ? "" : " AND id NOT IN (\(excluding.sorted().map(String.init).joined(separator: ",")))"
        let heads = try store.pool.writeWithoutTransaction { db in
            try OutboxItemRecord.fetchAll(db, sql: """
                SELECT * FROM outbox_item WHERE id IN (
                    SELECT MIN(id) FROM outbox_item WHERE state = ?\(excluded) GROUP BY task_id
                ) ORDER BY id
                """, arguments: [OutboxItemRecord.State.pending.rawValue])
        }
        // Held in memory (the disk refused them): each lane's first when none of its items is on disk.
        let unsaved = keepUnsaved().filter { item in !heads.contains { $0.taskId == item.taskId } }
        let lanes = Dictionary(grouping: unsaved, by: \.taskId).compactMap { $0.value.first }
        // An item whose commit is not on disk yet waits for its sync (whose end wakes the uplink again).
        return (heads + lanes).filter { $0.kind.priority <= maxPriority && !store.isAwaitingSync($0.id) }.sorted { ($0.kind.priority, $0.id ?? 0) < ($1.kind.priority, $1.id ?? 0) }
    }

    /// The backend took it: the item leaves the queue.
    public func complete(itemId: Int64) throws {
        guard itemId > 0 else {
            store.unsavedItems.withLock { $0.items.removeAll { $0.id == itemId } }
            return
        }
        // Already gone (a completion repeated) is the same outcome.
        _ = try store.pool.write { db in try OutboxItemRecord.deleteOne(db, key: itemId) }
    }

    /// The backend refused it (409/422/4xx): kept as dead with its answer, never retried.
    public func deadLetter(itemId: Int64, answer: String, now: Double) throws {
        guard itemId > 0 else {
            store.unsavedItems.withLock { $0.items.removeAll { $0.id == itemId } }
            return
        }
        try store.pool.write { db in try OutboxItemRecord.deadLetter(itemId, answer: answer, now: now, in: db) }
    }

    /// A retryable failure: counted, kept pending.
    public func recordFailure(itemId: Int64, error: String) throws {
        guard itemId > 0 else { return }
        try store.pool.write { db in
            try db.execute(sql: "UPDATE outbox_item SET attempts = attempts + 1, last_error = ? WHERE id = ?", arguments: [error, itemId])
        }
    }

    /// The pending items of one task, oldest first.
    public func pendingItems(taskId: String) throws -> [OutboxItemRecord] {
        try store.pool.read { db in
            try OutboxItemRecord.fetchAll(
                db, "WHERE task_id = ? AND state = ? ORDER BY id", arguments: [taskId, OutboxItemRecord.State.pending.rawValue])
        }
    }

    /// Whether the task has a pending item other than `itemId` (one indexed lookup, no rows decoded: every ack asks).
    public func hasPendingItems(taskId: String, besides itemId: Int64?, kinds: Set<OutboxItemRecord.Kind>) throws -> Bool {
        // Asked by an ack right after the answer: on the writer's warm cache, as `headItems`.
        let kindList = kinds.map { "'\($0.rawValue)'" }.sorted().joined(separator: ", ")
        return try store.pool.writeWithoutTransaction { db in
            try db.value(
                Bool.self, sql: "SELECT EXISTS (SELECT 1 FROM outbox_item WHERE state = ? AND task_id = ? AND id != ? AND kind IN (\(kindList)))",
                arguments: [OutboxItemRecord.State.pending.rawValue, taskId, itemId ?? -1]) ?? false
        }
    }

    /// Every pending item, by task, oldest first: one read for a whole sync merge.
    public func pendingItemsByTask() throws -> [String: [OutboxItemRecord]] {
        let items = try store.pool.read { db in
            try OutboxItemRecord.fetchAll(db, "WHERE state = ? ORDER BY id", arguments: [OutboxItemRecord.State.pending.rawValue])
        }
        return Dictionary(grouping: items, by: \.taskId)
    }

    /// Spool files that pending items of `kind` still need (their payload's `file`: a photo's, a bundle chunk's).
    public func pendingFiles(of kind: OutboxItemRecord.Kind) throws -> [String] {
        try store.pool.read { db in
            try db.values(String.self, sql: """
                SELECT json_extract(CAST(payload AS TEXT), '$.file') FROM outbox_item WHERE kind = ? AND state = ?
                """, arguments: [kind.rawValue, OutboxItemRecord.State.pending.rawValue])
        }
    }

    public func deadItems() throws -> [OutboxItemRecord] {
        try store.pool.read { db in
            try OutboxItemRecord.fetchAll(db, "WHERE state = ? ORDER BY id", arguments: [OutboxItemRecord.State.dead.rawValue])
        }
    }

    /// The newest `limit` dead letters, newest first, and how many are kept in all (one read).
    public func newestDeadItems(limit: Int) throws -> (items: [OutboxItemRecord], total: Int) {
        try store.pool.read { db in
            let dead = OutboxItemRecord.State.dead.rawValue
            let items = try OutboxItemRecord.fetchAll(db, "WHERE state = ? ORDER BY id DESC LIMIT ?", arguments: [dead, limit])
            let total = try db.value(Int.self, sql: "SELECT COUNT(*) FROM outbox_item WHERE state = ?", arguments: [dead]) ?? 0
            return (items, total)
        }
    }

    // MARK: Pings

    /// The batch to send next, so the live position never waits behind the backlog:
    /// - a ping newer than every batch already claimed goes first: alone when claimed batches wait (they may
    ///   have reached the backend, so they are resent unchanged), else with up to `maxPings - 1` of the oldest;
    /// - otherwise the claimed batch holding the newest ping, then the others oldest first.
    /// nil when nothing is waiting. `liveSent`: the live position went from memory just now, so the newest row here is
    /// backlog too: claimed batches go first, and no ping goes alone (after a lost batch, one request less a turn).
    public func claimPingBatch(maxPings: Int, liveSent: Bool = false, newBatchId: @Sendable () -> String) throws -> PingBatch? {
        // Pings in the log go to the backend from the database: they are folded in first (after a spell offline).
        if store.loggedPings > 0 { try store.foldPingLog() }
        return try store.pool.write { db in
            let newest = try PingRecord.fetchOne(db, "WHERE batch_id IS NULL ORDER BY id DESC")
            let open = try Self.openPingBatches(db)
            let newestOpen = open.max { ($0.value("newest") ?? 0 as Int64) < ($1.value("newest") ?? 0) }
            // The newest ping ever put in a batch (acked batches are gone, so it is kept aside).
            let lastClaimed = try UnitStateRecord.fetchOne(db)?.lastClaimedPing ?? 0
            if let newest, let newestId = newest.id, open.isEmpty || !liveSent && newestId > max(lastClaimed, newestOpen?.value("newest") ?? 0) {
                let backlog = open.isEmpty
                    ? try PingRecord.fetchAll(
                        db, "WHERE batch_id IS NULL AND id < ? ORDER BY id LIMIT ?", arguments: [newestId, max(0, maxPings - 1)])
                    : []
                return try Self.claim(backlog + [newest], as: newBatchId(), in: db)
            }
            guard let newestOpen else { return nil }
            // A live batch (one ping) that failed goes again first; then the claimed backlog, oldest first.
            let oldestOpen = open.min { ($0.value("oldest") ?? 0 as Int64) < ($1.value("oldest") ?? 0) }!
            let next: String = (newestOpen.value("n") ?? 0 as Int) == 1 ? newestOpen.value("batch_id") ?? "" : oldestOpen.value("batch_id") ?? ""
            let pings = try PingRecord.fetchAll(db, "WHERE batch_id = ? ORDER BY id", arguments: [next])
            return PingBatch(batchId: next, pings: pings)
        }
    }

    /// What waits on disk to ride with the live batch (`LocationBatch.carried`), at most `maxPings` pings in all, oldest
    /// first: batches sent before and not acked (their request was lost), whole (one that does not fit stays for its
    /// own request), none of `excluding` (batches in memory that their window wrote meanwhile); then, with the room left,
    /// the oldest pings in no batch yet (their window wrote them before a turn took them: after a failed attempt) as a
    /// new batch. `onlyIfAllFit`: nothing unless every ping waiting here fits. The log is folded in first.
    ///
    /// A read, and a write only to claim pings: every turn asks, and on a link that works the disk holds nothing, so
    /// the database's one writer (a driver's transition) is not taken for it.
    public func claimBatchesToCarry(
        maxPings: Int, excluding: Set<String>, onlyIfAllFit: Bool = false, newBatchId: @Sendable () -> String
    ) throws -> [PingBatch] {
        guard maxPings > 0 else { return [] }
        if store.loggedPings > 0 { try store.foldPingLog() }
        let (batches, backlog) = try store.pool.read { db -> ([PingBatch], [PingRecord]) in
            if onlyIfAllFit {
                // Counted no further than the limit: a backlog of hours need not be counted to know it does not fit.
                let waiting = try db.value(Int.self, sql: "SELECT COUNT(*) FROM (SELECT 1 FROM ping LIMIT ?)", arguments: [maxPings + 1]) ?? 0
                guard waiting <= maxPings else { return ([], []) }
            }
            var batches: [PingBatch] = []
            var count = 0
            for row in try Self.openPingBatches(db) {
                guard let batchId: String = row.value("batch_id"), !excluding.contains(batchId) else { continue }
                let size: Int = row.value("n") ?? 0
                guard count + size <= maxPings else { continue }
                batches.append(PingBatch(batchId: batchId, pings: try PingRecord.fetchAll(db, "WHERE batch_id = ? ORDER BY id", arguments: [batchId])))
                count += size
            }
            return (batches, try PingRecord.fetchAll(db, "WHERE batch_id IS NULL ORDER BY id LIMIT ?", arguments: [maxPings - count]))
        }
        guard !backlog.isEmpty else { return batches }
        // Only this uplink's turn claims pings, so the rows read are still in no batch.
        return batches + [try store.pool.write { db in try Self.claim(backlog, as: newBatchId(), in: db) }]
    }

    /// Every batch sent and not acked: `batch_id`, its `newest` and `oldest` row and its size `n`, oldest first.
    private static func openPingBatches(_ db: Database) throws -> [Row] {
        try db.rows(sql: """
            SELECT batch_id, MAX(id) AS newest, MIN(id) AS oldest, COUNT(*) AS n FROM ping
            WHERE batch_id IS NOT NULL GROUP BY batch_id ORDER BY oldest
            """)
    }

    /// Puts `pings` (rows in no batch) into the batch `batchId`, and keeps the newest ping ever claimed.
    private static func claim(_ pings: [PingRecord], as batchId: String, in db: Database) throws -> PingBatch {
        let ids = pings.compactMap(\.id)
        try db.execute(
            sql: "UPDATE ping SET batch_id = ? WHERE id IN (\(ids.map { _ in "?" }.joined(separator: ",")))",
            arguments: [batchId] + ids.map { $0 as any DatabaseValueConvertible })
        var state = try UnitStateRecord.fetchOne(db) ?? UnitStateRecord()
        state.lastClaimedPing = max(state.lastClaimedPing, ids.max() ?? 0)
        try state.save(db)
        return PingBatch(batchId: batchId, pings: pings.map { ping in
            var ping = ping
            ping.batchId = batchId
            return ping
        })
    }

    /// The backend acked the batch: its pings leave. Returns how many.
    @discardableResult
    public func ackPingBatch(_ batchId: String) throws -> Int {
        // A batch sent from memory may have been logged before its answer came: folded in first, then deleted.
        if store.loggedPings > 0 { try store.foldPingLog() }
        return try store.pool.write { db in
            try db.execute(sql: "DELETE FROM ping WHERE batch_id = ?", arguments: [batchId])
            return db.changesCount
        }
    }

    /// The depth as read at most `maxAge` ago: `agent.status` and the systemd status line are asked often
    /// (many front ends polling), and counting the ping table each time would cost more than the answer.
    public func depth(maxAge: Duration) throws -> Depth {
        if let recent = recent.withLock({ $0 }), ContinuousClock.now - recent.at <= maxAge { return recent.depth }
        return try depth()
    }

    public func depth() throws -> Depth {
        let depth = try readDepth()
        recent.withLock { $0 = (depth, ContinuousClock.now) }
        return depth
    }

    private func readDepth() throws -> Depth {
        var depth = try store.pool.read { db in
            var depth = Depth()
            for row in try db.rows(sql: "SELECT kind, state, COUNT(*) AS n, MIN(created_at) AS oldest FROM outbox_item GROUP BY kind, state") {
                let count = row.value("n") ?? 0
                if row.value("state") == OutboxItemRecord.State.dead.rawValue {
                    depth.dead += count
                    continue
                }
                let kind = OutboxItemRecord.Kind(rawValue: row.value("kind") ?? "")
                if let kind { depth.byKind[kind, default: 0] += count }
                // A kind this release does not know (a newer one's row) still counts: as a transition, never dropped.
                switch kind?.category ?? .transition {
                case .transition: depth.transitions += count
                case .proof: depth.proofs += count
                case .routeChange: depth.routeChanges += count
                case .activity: depth.activity += count
                case .alert: depth.sos += count
                }
                depth.oldestPending = [depth.oldestPending, row.value("oldest")].compactMap { $0 }.min()
            }
            return depth
        }
        // The log's pings and the table's (a fold moves them from one to the other).
        let (count, oldest) = try store.countingPings { logged in
            try store.pool.read { db -> (Int, Double?) in
                let pings = try db.row(sql: "SELECT COUNT(*) AS n, MIN(recorded_at) AS oldest FROM ping")
                return ((pings?.value("n") ?? 0) + logged, pings?.value("oldest"))
            }
        }
        depth.pings = count
        depth.oldestPending = [depth.oldestPending, oldest].compactMap { $0 }.min()
        for item in store.unsavedItems.withLock({ $0.items }) {
            switch item.kind.category {
            case .transition: depth.transitions += 1
            case .proof: depth.proofs += 1
            case .routeChange: depth.routeChanges += 1
            case .activity: depth.activity += 1
            case .alert: depth.sos += 1
            }
            depth.byKind[item.kind, default: 0] += 1
        }
        return depth
    }

}
