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
        #expect(try store.appliedMigrations().suffix(9) == ["v3_tasks", "v4_pushes", "v5_time_source", "v6_unit_state", "v7_visits", "v8_travel", "v9_harsh_events", "v10_remote_config", "v11_fleet_requests"])
        #expect(try Outbox(store: store).pendingItems(taskId: "t1").map(\.idempotencyKey) == ["k1"])
        #expect(try TaskBook(store: store).tasks().isEmpty)
    }
}
