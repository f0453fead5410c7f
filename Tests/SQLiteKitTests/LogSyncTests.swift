import Foundation
import SQLiteKit
import Testing

/// `DatabasePool.syncLog`: a commit made at `synchronous = NORMAL` and synced afterwards is on disk as one made at
/// FULL. What a power cut would lose cannot be shown here; what can: the sync runs against the log SQLite writes,
/// follows it through a truncating checkpoint and a reopened database, and a commit is readable by another
/// connection before its sync (the uplink sends it meanwhile).
@Suite("SQLiteKit: syncing the write-ahead log")
struct LogSyncTests {
    static func makePool() throws -> (DatabasePool, String) {
        let path = testDirectory("logsync") + "/test.sqlite"
        let pool = try DatabasePool(path: path)
        try pool.write { db in try db.execute(sql: "CREATE TABLE item (id INTEGER PRIMARY KEY, body TEXT NOT NULL)") }
        return (pool, path)
    }

    @Test("a committed row is visible to a reader before the sync, and the sync of its log succeeds")
    func visibleThenSynced() throws {
        let (pool, path) = try Self.makePool()
        try pool.write { db in try db.execute(sql: "INSERT INTO item (body) VALUES ('accept')") }
        #expect(try pool.read { db in try db.value(Int.self, sql: "SELECT COUNT(*) FROM item") } == 1)
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        try pool.syncLog()
        try pool.syncLog()
    }

    @Test("a truncating checkpoint keeps the log's file; the sync follows a log made anew by another pool")
    func followsTheLog() throws {
        let (pool, path) = try Self.makePool()
        try pool.write { db in try db.execute(sql: "INSERT INTO item (body) VALUES ('one')") }
        try pool.syncLog()
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try pool.write { db in try db.execute(sql: "INSERT INTO item (body) VALUES ('two')") }
        try pool.syncLog()
        // Another process's pool on the same file (a maintenance tool) shares the log.
        let other = try DatabasePool(path: path)
        try other.write { db in try db.execute(sql: "INSERT INTO item (body) VALUES ('three')") }
        try other.syncLog()
        try pool.syncLog()
        #expect(try pool.read { db in try db.value(Int.self, sql: "SELECT COUNT(*) FROM item") } == 3)
    }
}
