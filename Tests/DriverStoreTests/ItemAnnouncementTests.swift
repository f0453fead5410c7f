@testable import DriverStore
import Foundation
import SQLiteKit
import Synchronization
import Testing

/// The store says when an outbox item can be sent (`whenItemQueued`): the sender listens once instead of every owner
/// waking it by hand (a forgotten wake-up left an item waiting for the next batch).
@Suite("The store announces what can be sent")
struct ItemAnnouncementTests {
    struct Refused: Error {}

    @Test("after the commit that queued it; never for a rolled-back one or a write without an item; a change committed before the disk after its sync")
    func announced() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let heard = Mutex(0)
        store.whenItemQueued { heard.withLock { $0 += 1 } }
        let outbox = Outbox(store: store)
        try outbox.enqueue(TaskBookTests.item("t1", "k1"))
        #expect(heard.withLock { $0 } == 1)
        // A write that queues nothing (a task's own state, pings) is not announced.
        let book = TaskBook(store: store)
        try book.commit(TaskBookTests.task("t2", "ACCEPTED"), item: nil)
        try store.logPings([StoreTests.ping(5)], travel: nil)
        try store.foldPingLog()
        #expect(heard.withLock { $0 } == 1)
        // Rolled back: the insert happened inside the transaction, and is gone with it.
        #expect(throws: Refused.self) {
            try store.writeDurably { db in
                _ = try TaskBookTests.item("t1", "k2").insertItem(db)
                throw Refused()
            }
        }
        #expect(heard.withLock { $0 } == 1)
        // A driver's action committed to the log before the disk holds it: the sender hears of it after the sync.
        try book.commit(TaskBookTests.task("t3", "ACCEPTED", sync: "pending"), item: TaskBookTests.item("t3", "k3"), syncLater: true)
        #expect(heard.withLock { $0 } == 1)
        try store.syncToDisk()
        #expect(heard.withLock { $0 } == 2)
        // A sync with nothing new to hold says nothing.
        try store.syncToDisk()
        #expect(heard.withLock { $0 } == 2)
        // Two items in one transaction: one announcement.
        try store.writeDurably { db in
            _ = try TaskBookTests.item("t4", "k4").insertItem(db)
            _ = try TaskBookTests.item("t5", "k5").insertItem(db)
        }
        #expect(heard.withLock { $0 } == 3)
    }
}
