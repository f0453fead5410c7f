import DriverAPI
import DriverDomain
@testable import DriverStore
import Foundation
import SQLiteKit
import Testing

@Suite("Outbox")
struct OutboxTests {
    func item(_ task: String, _ key: String, at time: Double = 0) -> OutboxItemRecord {
        OutboxItemRecord(kind: .status, taskId: task, idempotencyKey: key, payload: Data(#"{"status":"ACCEPTED"}"#.utf8), createdAt: time)
    }

    @Test("an answer to an offer is queued once per key ever: again while queued, after it was sent, after a reopening: nothing")
    func answerOnce() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func answer(at time: Double) -> OutboxItemRecord {
            OutboxItemRecord(kind: .configAck, taskId: "~config", idempotencyKey: "config-v3-refused-abc", payload: Data(#"{"at":\#(time)}"#.utf8), createdAt: time)
        }
        do {
            let outbox = Outbox(store: try Store(directory: directory))
            #expect(try outbox.enqueueAnswerOnce(answer(at: 1)))
            #expect(try !outbox.enqueueAnswerOnce(answer(at: 2)))
            let queued = try outbox.headItems()
            #expect(queued.map(\.payload) == [Data(#"{"at":1.0}"#.utf8)])
            try outbox.complete(itemId: try #require(queued.first?.id))
            #expect(try !outbox.enqueueAnswerOnce(answer(at: 3)))
        }
        let reopened = Outbox(store: try Store(directory: directory))
        #expect(try !reopened.enqueueAnswerOnce(answer(at: 4)))
        #expect(try reopened.headItems().isEmpty)
    }

    @Test("an item inserted with its columns named writes what the record's Encodable conformance writes")
    func insertedColumns() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        var full = OutboxItemRecord(kind: .podOTP, taskId: "t-1", idempotencyKey: "k-1", payload: Data([0, 1, 255]), createdAt: 1.5)
        full.state = .dead
        full.attempts = 3
        full.lastError = "timeout"
        full.backendAnswer = #"{"error":"x"}"#
        full.finishedAt = 2.25
        let bare = item("t-2", "k-2", at: 3)
        for record in [full, bare] {
            let (named, generic) = try store.pool.write { db -> (OutboxItemRecord?, OutboxItemRecord?) in
                var named = record, generic = record
                named.idempotencyKey += "-named"
                generic.idempotencyKey += "-generic"
                let namedId = try named.insertItem(db), genericId = try generic.insert(db)
                return (try OutboxItemRecord.fetchOne(db, key: namedId), try OutboxItemRecord.fetchOne(db, key: genericId))
            }
            var expected = try #require(generic)
            expected.id = named?.id
            expected.idempotencyKey = record.idempotencyKey + "-named"
            #expect(named == expected)
        }
    }

    @Test("a database written by the first migration is upgraded without losing a row")
    func upgradeFromV1() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let pool = try DatabasePool(path: directory + "/driverd.sqlite")
            try Migrations.migrator.migrate(pool, upTo: "v1_pings")
            try pool.write { db in
                for t in 0..<25 {
                    try db.execute(sql: """
                        INSERT INTO ping (fix_time, latitude, longitude, fix_mode, motion, reason, recorded_at)
                        VALUES (?, 49.0, 12.0, 3, 'moving', 'interval', ?)
                        """, arguments: [Double(t), Double(t)])
                }
            }
        }
        let store = try Store(directory: directory)
        #expect(try store.appliedMigrations() == StoreTests.allMigrations)
        let pings = try store.pool.read { try PingRecord.fetchAll($0, "ORDER BY id") }
        #expect(pings.count == 25 && pings.allSatisfy { $0.batchId == nil } && pings.last?.fixTime == 24)
        #expect(try Outbox(store: store).depth().pings == 25)
    }

    @Test("a database of v5 keeps its shift, push id, outbox owner and ping cursor in the typed unit_state row")
    func upgradeToUnitState() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let pool = try DatabasePool(path: directory + "/driverd.sqlite")
            try Migrations.migrator.migrate(pool, upTo: "v5_time_source")
            try pool.write { db in
                for (key, value) in [("last_claimed_ping", "42"), ("last_push_id", "7"), ("outbox_owner", "drv-1"), ("shift_on", "1"),
                                     ("shift_started_at", "1795852800.5"), ("shift_ended_at", "1795800000")] {
                    try db.execute(sql: "INSERT INTO uplink_state(key, value) VALUES (?, ?)", arguments: [key, value])
                }
            }
        }
        let store = try Store(directory: directory)
        let state = try UnitState(store: store).read()
        #expect(state.lastClaimedPing == 42 && state.lastPushId == 7 && state.outboxOwner == "drv-1")
        #expect(state.shiftOn && state.shiftStartedAt == 1_795_852_800.5 && state.shiftEndedAt == 1_795_800_000)
        // One transaction for a change of several fields.
        try UnitState(store: store).update { $0.shiftOn = false; $0.shiftEndedAt = 1_795_900_000; $0.outboxOwner = nil }
        let after = try UnitState(store: store).read()
        #expect(!after.shiftOn && after.shiftEndedAt == 1_795_900_000 && after.outboxOwner == nil && after.lastPushId == 7)
        // Push cursors, one per driver: the first driver after the upgrade continues from the single cursor of before;
        // another starts at 0; a cursor only moves forward.
        let cursors = PushCursors(store: store)
        #expect(try cursors.lastId(driver: "drv-1") == 7)
        try cursors.advance(driver: "drv-1", to: 9)
        #expect(try cursors.lastId(driver: "drv-2") == 0)
        try cursors.advance(driver: "drv-2", to: 3)
        try cursors.advance(driver: "drv-2", to: 2)
        #expect(try cursors.lastId(driver: "drv-1") == 9 && cursors.lastId(driver: "drv-2") == 3)
        // A fresh database starts from the defaults.
        let fresh = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: fresh) }
        #expect(try UnitState(store: try Store(directory: fresh)).read() == UnitStateRecord())
    }

    @Test("items go out in order per task: each task's head first; refused items are kept as dead, never resent")
    func itemsPerTask() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let outbox = Outbox(store: try Store(directory: directory))
        let a1 = try outbox.enqueue(item("A", "a1", at: 1))
        try outbox.enqueue(item("B", "b1", at: 2))
        try outbox.enqueue(item("A", "a2", at: 3))
        #expect(try outbox.headItems().map(\.idempotencyKey) == ["a1", "b1"])
        try outbox.complete(itemId: a1.id!)
        #expect(try outbox.headItems().map(\.idempotencyKey) == ["b1", "a2"])
        try outbox.recordFailure(itemId: a1.id! + 1, error: "HTTP 503")
        let b1 = try outbox.headItems().first!
        #expect(b1.attempts == 1 && b1.lastError == "HTTP 503")
        try outbox.deadLetter(itemId: b1.id!, answer: #"{"error":{"code":"INVALID_TRANSITION"}}"#, now: 9)
        #expect(try outbox.headItems().map(\.idempotencyKey) == ["a2"])
        #expect(try outbox.deadItems().map(\.backendAnswer) == [#"{"error":{"code":"INVALID_TRANSITION"}}"#])
        let newest = try outbox.newestDeadItems(limit: 0)
        #expect(newest.items.isEmpty && newest.total == 1)
        #expect(try outbox.newestDeadItems(limit: 5).items == outbox.deadItems())
        let depth = try outbox.depth()
        #expect(depth.transitions == 1 && depth.dead == 1 && depth.oldestPending == 3 && depth.byKind == [.status: 1], "\(depth)")
        #expect(throws: (any Error).self) { try outbox.enqueue(item("C", "a2")) }
        // Whether a task has more queued than the item just acked: dead letters, other tasks and other kinds on the
        // task's lane (a visit's report) do not count.
        let a2 = try outbox.headItems().first!
        let changes: Set<OutboxItemRecord.Kind> = [.status, .podOTP, .podPhoto]
        #expect(try !outbox.hasPendingItems(taskId: "A", besides: a2.id, kinds: changes) && outbox.hasPendingItems(taskId: "A", besides: nil, kinds: changes))
        #expect(try !outbox.hasPendingItems(taskId: "B", besides: nil, kinds: changes) && !outbox.hasPendingItems(taskId: "C", besides: nil, kinds: changes))
        try outbox.enqueue(OutboxItemRecord(kind: .visit, taskId: "A", idempotencyKey: "v1", payload: Data("{}".utf8), createdAt: 4))
        #expect(try !outbox.hasPendingItems(taskId: "A", besides: a2.id, kinds: changes))
        #expect(try outbox.hasPendingItems(taskId: "A", besides: a2.id, kinds: [.visit]))
        try outbox.enqueue(item("A", "a3", at: 4))
        #expect(try outbox.hasPendingItems(taskId: "A", besides: a2.id, kinds: changes))
    }

    @Test("each kind counts as what it is: a new stop order is a route change, never a proof; a kind from a newer release still counts")
    func depthByKind() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let outbox = Outbox(store: store)
        for (index, kind) in OutboxItemRecord.Kind.allCases.enumerated() {
            try outbox.enqueue(OutboxItemRecord(kind: kind, taskId: "t\(index)", idempotencyKey: "k\(index)", payload: Data("{}".utf8), createdAt: 1))
        }
        var depth = try outbox.depth()
        // A status, two proofs, a stop order and an SOS; every other kind is a record of activity (a new one too).
        let kinds = OutboxItemRecord.Kind.allCases.count
        #expect(depth.transitions == 1 && depth.proofs == 2 && depth.routeChanges == 1 && depth.activity == kinds - 5 && depth.sos == 1, "\(depth)")
        #expect(depth.items == kinds && depth.byKind.count == kinds && depth.byKind.values.allSatisfy { $0 == 1 }, "\(depth)")
        try store.pool.write { db in
            try db.execute(sql: "INSERT INTO outbox_item (kind, task_id, idempotency_key, payload, created_at) VALUES ('fuel', 'v', 'kv', x'7B7D', 2)")
        }
        depth = try outbox.depth()
        #expect(depth.items == kinds + 1, "\(depth)")
    }

    @Test("heads by priority: an SOS first, then transitions, proofs and visits, then trips and harsh events; oldest first within each")
    func headsByPriority() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let outbox = Outbox(store: try Store(directory: directory))
        func queue(_ kind: OutboxItemRecord.Kind, _ lane: String, _ key: String) throws {
            try outbox.enqueue(OutboxItemRecord(kind: kind, taskId: lane, idempotencyKey: key, payload: Data("{}".utf8), createdAt: 1))
        }
        try queue(.harsh, TaskRecord.activityLane, "harsh")
        try queue(.status, "A", "a1")
        try queue(.trip, TaskRecord.activityLane, "trip")
        try queue(.podOTP, "B", "b1")
        try queue(.sos, TaskRecord.sosLane, "sos1")
        try queue(.status, "A", "a2")
        try queue(.sos, TaskRecord.sosLane, "sos2")
        #expect(try outbox.headItems().map(\.idempotencyKey) == ["sos1", "a1", "b1", "harsh"])
        #expect(try outbox.headItems(upTo: .normal).map(\.idempotencyKey) == ["sos1", "a1", "b1"])
        #expect(try outbox.headItems(upTo: .urgent).map(\.idempotencyKey) == ["sos1"])
        #expect(OutboxItemRecord.Kind.allCases.filter { $0.priority == .urgent } == [.sos])
        #expect(OutboxItemRecord.Kind.allCases.filter { $0.priority == .low } == [.trip, .idle, .harsh, .diagChunk, .health])
    }

    @Test("ping batches: the newest ping with the oldest backlog; an unacked batch is resent as it was; an ack deletes it")
    func pingBatches() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let recorder = PingRecorder(store: store)
        func record(_ times: Range<Int>) {
            for t in times { recorder.append(StoreTests.ping(Double(t)), now: 0, nextSampleIn: 0) }
            recorder.flush()
        }
        record(0..<12)
        let outbox = Outbox(store: store)
        let first = try #require(try outbox.claimPingBatch(maxPings: 5) { "batch-1" })
        #expect(first.batchId == "batch-1" && first.pings.map(\.fixTime) == [0, 1, 2, 3, 11])
        // Not acked (a crash, a lost answer): the same batch comes back.
        let again = try #require(try outbox.claimPingBatch(maxPings: 5) { "batch-2" })
        #expect(again == first)
        #expect(try outbox.ackPingBatch("batch-1") == 5)
        let second = try #require(try outbox.claimPingBatch(maxPings: 5) { "batch-3" })
        #expect(second.pings.map(\.fixTime) == [4, 5, 6, 7, 10])
        #expect(try outbox.ackPingBatch("batch-3") == 5)
        let last = try #require(try outbox.claimPingBatch(maxPings: 5) { "batch-4" })
        #expect(last.pings.map(\.fixTime) == [8, 9])
        try outbox.ackPingBatch("batch-4")
        #expect(try outbox.claimPingBatch(maxPings: 5) { "batch-5" } == nil)
        #expect(try outbox.depth().pings == 0)

        // A claimed batch waits (its answer lost) while newer pings arrive: the newest goes first, alone, then the
        // claimed batch unchanged, then the rest.
        record(20..<30)
        let stuck = try #require(try outbox.claimPingBatch(maxPings: 5) { "stuck" })
        #expect(stuck.pings.map(\.fixTime) == [20, 21, 22, 23, 29])
        record(30..<33)
        let live = try #require(try outbox.claimPingBatch(maxPings: 5) { "live" })
        #expect(live.pings.map(\.fixTime) == [32])
        #expect(try outbox.claimPingBatch(maxPings: 5) { "x" }?.batchId == "live")
        try outbox.ackPingBatch("live")
        #expect(try outbox.claimPingBatch(maxPings: 5) { "x" } == stuck)
        try outbox.ackPingBatch("stuck")
        #expect(try outbox.claimPingBatch(maxPings: 5) { "rest" }?.pings.map(\.fixTime) == [24, 25, 26, 27, 31])
        try outbox.ackPingBatch("rest")

        // The live position went from memory in the same attempt (a lost batch's next turn): no ping goes alone, the
        // claimed batch first, then the rows after it in one batch.
        record(40..<45)
        let lost = try #require(try outbox.claimPingBatch(maxPings: 5) { "lost" })
        #expect(lost.pings.map(\.fixTime) == [28, 30, 40, 41, 44])
        record(45..<48)
        #expect(try outbox.claimPingBatch(maxPings: 5, liveSent: true) { "x" } == lost)
        try outbox.ackPingBatch("lost")
        let after = try #require(try outbox.claimPingBatch(maxPings: 5, liveSent: true) { "after" })
        #expect(after.pings.map(\.fixTime) == [42, 43, 45, 46, 47])
    }
}

@Suite("Retention")
struct RetentionTests {
    @Test("past the count cap the oldest backlog is thinned to one per minute, then dropped; old pings age out; batches and items are kept")
    func caps() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let recorder = PingRecorder(store: store)
        // 10 minutes at 1 Hz, recorded "now".
        for t in 0..<600 { recorder.append(StoreTests.ping(1_795_000_000 + Double(t)), now: 0, nextSampleIn: 0) }
        recorder.flush()
        let outbox = Outbox(store: store)
        try outbox.enqueue(OutboxItemRecord(kind: .status, taskId: "t", idempotencyKey: "k", payload: Data(), createdAt: 0))
        let claimed = try #require(try outbox.claimPingBatch(maxPings: 10) { "b" })
        #expect(try outbox.applyRetention(RetentionPolicy(maxPings: 1000)).isEmpty)

        // Cap 300: 290 thinned away from the oldest backlog, keeping one per minute there.
        let thin = try outbox.applyRetention(RetentionPolicy(maxPings: 300))
        #expect(thin == RetentionResult(thinned: 300, dropped: 0))
        #expect(try outbox.depth().pings == 300)
        // Cap 100: still thinning (newer minutes now), nothing dropped.
        let more = try outbox.applyRetention(RetentionPolicy(maxPings: 100))
        #expect(more.thinned == 200 && more.dropped == 0)
        // Cap 15: the backlog is down to one ping per minute, then the oldest of those go.
        let drop = try outbox.applyRetention(RetentionPolicy(maxPings: 15))
        #expect(drop.thinned > 0 && drop.dropped > 0 && drop.thinned + drop.dropped == 85, "\(drop)")
        let minutes = try store.pool.read {
            try $0.value(Int.self, sql: "SELECT COUNT(DISTINCT CAST(fix_time / 60 AS INTEGER)) FROM ping WHERE batch_id IS NULL")
        }
        #expect(minutes == 5)
        #expect(try outbox.depth().pings == 15)
        // The claimed batch is untouched, and so is the transition.
        #expect(try outbox.claimPingBatch(maxPings: 10) { "x" } == claimed)
        #expect(try outbox.headItems().count == 1)

        // Age, in GPS time: a ping two days newer makes the rest more than a day old and they go, except the
        // claimed batch. The system clock has no say, so a clock step drops nothing.
        recorder.append(StoreTests.ping(1_795_000_600 + 2 * 86400), now: 0, nextSampleIn: 0)
        recorder.flush()
        #expect(try outbox.applyRetention(RetentionPolicy(maxAge: 3 * 86400)).isEmpty)
        let aged = try outbox.applyRetention(RetentionPolicy(maxAge: 86400))
        #expect(aged.dropped == 5)
        #expect(try outbox.depth().pings == claimed.pings.count + 1)
    }
}
