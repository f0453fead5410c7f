@testable import DriverStore
import Foundation
import SQLiteKit
import Testing

@Suite("Task book")
struct TaskBookTests {
    static func task(_ id: String, _ status: String, sync: String = "synced") -> TaskRecord {
        TaskRecord(
            id: id, status: status, backendStatus: "ASSIGNED", syncState: sync, podType: "OTP", podState: "none",
            failureReason: nil, detail: Data("{}".utf8), updatedAt: 1)
    }

    static func item(_ task: String, _ key: String) -> OutboxItemRecord {
        OutboxItemRecord(kind: .status, taskId: task, idempotencyKey: key, payload: Data("{}".utf8), createdAt: 1)
    }

    @Test("a driver action stores the task and its outbox item together, or neither")
    func commitTogether() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let book = TaskBook(store: store)
        try book.commit(Self.task("t1", "ACCEPTED", sync: "pending"), item: Self.item("t1", "k1"))
        #expect(try book.task(id: "t1")?.status == "ACCEPTED")
        #expect(try Outbox(store: store).pendingItems(taskId: "t1").map(\.idempotencyKey) == ["k1"])
        // The same key again violates the key's uniqueness: the task's new status must not be stored either.
        #expect(throws: SQLiteError.self) { try book.commit(Self.task("t1", "ARRIVED_AT_STORE", sync: "pending"), item: Self.item("t1", "k1")) }
        #expect(try book.task(id: "t1")?.status == "ACCEPTED")
        #expect(try Outbox(store: store).pendingItems(taskId: "t1").count == 1)
    }

    @Test("a change that keeps the task's detail writes every other column; a row not there yet is inserted whole")
    func stateOnlyWrite() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let book = TaskBook(store: try Store(directory: directory))
        var task = Self.task("t1", "ACCEPTED", sync: "pending")
        task.detail = Data(#"{"id":"t1"}"#.utf8)
        // No row yet: written whole although the caller's detail is unchanged.
        try book.commit(task, detailChanged: false, item: Self.item("t1", "k1"))
        #expect(try book.task(id: "t1") == task)
        var next = task
        next.status = "DELIVERY_FAILED"
        next.backendStatus = "ACCEPTED"
        next.syncState = "synced"
        next.podState = "captured"
        next.failureReason = "REFUSED"
        next.updatedAt = 2
        try book.commit(next, detailChanged: false, item: nil)
        #expect(try book.task(id: "t1") == next)
        // The detail is the caller's to judge: unchanged means the row's stays.
        var stale = next
        stale.detail = Data("{}".utf8)
        stale.failureReason = nil
        try book.commit(stale, detailChanged: false, item: Self.item("t1", "k2"))
        var expected = stale
        expected.detail = task.detail
        #expect(try book.task(id: "t1") == expected)
        try book.commit(stale, item: nil)
        #expect(try book.task(id: "t1") == stale)
    }

    @Test("an item committed without waiting for the disk is not the queue's head until its sync is done")
    func itemWaitsForItsSync() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let book = TaskBook(store: store), outbox = Outbox(store: store)
        let first = try #require(try book.commit(Self.task("t1", "ACCEPTED", sync: "pending"), item: Self.item("t1", "k1"), syncLater: true))
        #expect(try outbox.headItems().isEmpty, "not on disk yet: not to be sent")
        // A durable commit of another task's item goes at once; the first still waits.
        try book.commit(Self.task("t2", "ACCEPTED", sync: "pending"), item: Self.item("t2", "k2"))
        #expect(try outbox.headItems().map(\.idempotencyKey) == ["k2"])
        try store.syncToDisk()
        #expect(try outbox.headItems().map(\.idempotencyKey) == ["k1", "k2"])
        #expect(try outbox.headItems().first == first)
    }

    @Test("a sync writes tasks, removes others, stores the order and dead-letters in one go; the route survives a reopen")
    func applySync() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let store = try Store(directory: directory)
            let book = TaskBook(store: store)
            try book.commit(Self.task("t1", "ACCEPTED"), item: Self.item("t1", "k1"))
            try book.commit(Self.task("t2", "ASSIGNED"), item: nil)
            let pending = try Outbox(store: store).pendingItems(taskId: "t1")
            try book.applySync(
                upserts: [Self.task("t1", "CANCELLED"), Self.task("t3", "ASSIGNED")], removals: ["t2"],
                sequence: ["t3-pickup", "t3-dropoff"], deadLetters: [pending[0].id!: "conflict"], now: 5)
        }
        let store = try Store(directory: directory)
        let book = TaskBook(store: store)
        #expect(try book.tasks().map(\.id) == ["t1", "t3"])
        #expect(try book.task(id: "t1")?.status == "CANCELLED")
        #expect(try book.sequence() == ["t3-pickup", "t3-dropoff"])
        let dead = try Outbox(store: store).deadItems()
        #expect(dead.map(\.idempotencyKey) == ["k1"] && dead[0].backendAnswer == "conflict" && dead[0].finishedAt == 5)
    }

    @Test("a database of v2 (pings and outbox) gains the task tables with every row kept")
    func upgradeFromV2() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let pool = try DatabasePool(path: directory + "/driverd.sqlite")
            try Migrations.migrator.migrate(pool, upTo: "v2_outbox")
            try pool.write { db in
                try db.execute(sql: """
                    INSERT INTO outbox_item (kind, task_id, idempotency_key, payload, created_at) VALUES ('status', 't1', 'k1', x'7b7d', 1)
                    """)
            }
        }
        let store = try Store(directory: directory)
        #expect(try store.appliedMigrations() == StoreTests.allMigrations)
        #expect(try Outbox(store: store).pendingItems(taskId: "t1").map(\.idempotencyKey) == ["k1"])
        #expect(try TaskBook(store: store).tasks().isEmpty)
    }
}
