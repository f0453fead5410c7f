import Foundation
import SQLiteKit
import Testing

private func temporaryPath() -> String { testDirectory("sqlitekit") + "/test.sqlite" }

private struct Parcel: TableRecord, Equatable {
    static let tableName = "parcel"
    enum State: String, Codable { case waiting, delivered }

    var id: Int64?
    var label: String
    var weight: Double?
    var fragile: Bool
    var photo: Data
    var state: State
    var previous: State?
    var count: Int
}

private func pool(_ path: String = temporaryPath()) throws -> DatabasePool {
    let pool = try DatabasePool(path: path)
    var migrator = Migrator()
    migrator.registerMigration("v1") { db in
        try db.execute(sql: """
            CREATE TABLE parcel (id INTEGER PRIMARY KEY AUTOINCREMENT, label TEXT NOT NULL UNIQUE, weight REAL, fragile INTEGER NOT NULL,
                photo BLOB NOT NULL, state TEXT NOT NULL, previous TEXT, count INTEGER NOT NULL);
            """)
    }
    try migrator.migrate(pool)
    return pool
}

@Suite("SQLiteKit")
struct SQLiteKitTests {
    @Test("a record goes in and comes back the same: optionals, booleans, blobs (empty too), enums; its row id is returned")
    func roundTrip() throws {
        let pool = try pool()
        var parcel = Parcel(id: nil, label: "a", weight: 1.5, fragile: true, photo: Data([0, 1, 255]), state: .waiting, previous: nil, count: 3)
        parcel.id = try pool.write { db in try parcel.insert(db) }
        #expect(parcel.id == 1)
        let empty = Parcel(id: nil, label: "b", weight: nil, fragile: false, photo: Data(), state: .delivered, previous: .waiting, count: -7)
        try pool.write { db in try empty.insert(db) }
        let read = try pool.read { db in try Parcel.fetchAll(db, "ORDER BY id") }
        #expect(read.first == parcel)
        #expect(read.last?.photo == Data() && read.last?.weight == nil && read.last?.previous == .waiting && read.last?.count == -7)
        #expect(try pool.read { db in try db.value(String.self, sql: "SELECT typeof(photo) FROM parcel WHERE label = 'b'") } == "blob")
    }

    @Test("a read on the writer sees each commit at once, the readers' the same rows")
    func readOnTheWriter() throws {
        let pool = try pool()
        for index in 0..<3 {
            let parcel = Parcel(id: nil, label: "p\(index)", weight: nil, fragile: false, photo: Data(), state: .waiting, previous: nil, count: index)
            try pool.write { db in try parcel.insert(db) }
            #expect(try pool.writeWithoutTransaction { db in try Parcel.fetchAll(db, "ORDER BY id") }.map(\.count) == Array(0...index))
            #expect(try pool.writeWithoutTransaction { db in try Parcel.fetchAll(db) } == pool.read { db in try Parcel.fetchAll(db) })
        }
    }

    @Test("save inserts or updates every column, writing NULL for a cleared optional; update and deleteOne say whether a row was there")
    func saveAndUpdate() throws {
        let pool = try pool()
        var parcel = Parcel(id: 9, label: "a", weight: 2, fragile: false, photo: Data([1]), state: .waiting, previous: .delivered, count: 1)
        try pool.write { db in try parcel.save(db) }
        parcel.weight = nil
        parcel.previous = nil
        parcel.state = .delivered
        try pool.write { db in try parcel.save(db) }
        #expect(try pool.read { db in try Parcel.fetchOne(db, key: 9) } == parcel)
        #expect(try pool.read { db in try Parcel.fetchCount(db) } == 1)
        let missing = Parcel(id: 10, label: "z", weight: nil, fragile: false, photo: Data(), state: .waiting, previous: nil, count: 0)
        #expect(try pool.write { db in try missing.update(db) } == false)
        #expect(try pool.write { db in try Parcel.deleteOne(db, key: 9) } == true)
        #expect(try pool.write { db in try Parcel.deleteOne(db, key: 9) } == false)
    }

    @Test("a write that throws leaves nothing; a constraint violation is a typed error, and the pool keeps working")
    func rollback() throws {
        let pool = try pool()
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try pool.write { db in
                try db.execute(sql: "INSERT INTO parcel (label, fragile, photo, state, count) VALUES ('x', 0, x'00', 'waiting', 0)", arguments: [])
                throw Stop()
            }
        }
        #expect(try pool.read { db in try Parcel.fetchCount(db) } == 0)
        try pool.write { db in try db.execute(sql: "INSERT INTO parcel (label, fragile, photo, state, count) VALUES ('x', 0, x'00', 'waiting', 0)", arguments: []) }
        let error = #expect(throws: SQLiteError.self) {
            try pool.write { db in try db.execute(sql: "INSERT INTO parcel (label, fragile, photo, state, count) VALUES ('x', 0, x'00', 'waiting', 0)", arguments: []) }
        }
        #expect(error?.isConstraintViolation == true && error?.message.contains("UNIQUE") == true, "\(String(describing: error))")
        #expect(try pool.read { db in try Parcel.fetchCount(db) } == 1)
    }

    @Test("bad statements are refused with the statement named: wrong argument count, several statements with arguments, a syntax error")
    func refusals() throws {
        let pool = try pool()
        let count = #expect(throws: SQLiteError.self) { try pool.write { db in try db.execute(sql: "SELECT ?", arguments: [1, 2]) } }
        #expect(count?.sql == "SELECT ?")
        #expect(throws: SQLiteError.self) { try pool.write { db in try db.execute(sql: "SELECT ?; SELECT 2", arguments: [1]) } }
        let syntax = #expect(throws: SQLiteError.self) { try pool.read { db in try db.rows(sql: "SELEC 1") } }
        #expect(syntax?.description.contains("syntax error") == true)
    }

    @Test("a full database (a file-size limit) is a write failure, keeps what was committed, and writes again once there is room")
    func fullDisk() throws {
        let pool = try pool()
        try pool.write { db in try db.execute(sql: "INSERT INTO parcel (label, fragile, photo, state, count) VALUES ('kept', 0, x'00', 'waiting', 0)", arguments: []) }
        let pages = try pool.read { db in try db.value(Int.self, sql: "PRAGMA page_count") } ?? 0
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = \(pages + 2)") }
        let error = #expect(throws: SQLiteError.self) {
            try pool.write { db in
                try db.execute(sql: "INSERT INTO parcel (label, fragile, photo, state, count) VALUES ('big', 0, zeroblob(1000000), 'waiting', 0)", arguments: [])
            }
        }
        #expect(error?.isWriteFailure == true, "\(String(describing: error))")
        #expect(try pool.read { db in try db.values(String.self, sql: "SELECT label FROM parcel") } == ["kept"])
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 1000000") }
        try pool.write { db in try db.execute(sql: "INSERT INTO parcel (label, fragile, photo, state, count) VALUES ('big', 0, zeroblob(1000000), 'waiting', 0)", arguments: []) }
        #expect(try pool.read { db in try Parcel.fetchCount(db) } == 2)
    }

    @Test("a read sees the last commit, never a write under way (WAL), and many threads read and write at once")
    func isolationAndConcurrency() throws {
        let pool = try pool()
        try pool.write { db in
            try db.execute(sql: "INSERT INTO parcel (label, fragile, photo, state, count) VALUES ('one', 0, x'00', 'waiting', 0)", arguments: [])
            #expect(try pool.read { try Parcel.fetchCount($0) } == 0)
        }
        #expect(try pool.read { try Parcel.fetchCount($0) } == 1)
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            do {
                for index in 0..<50 {
                    if worker % 2 == 0 {
                        let parcel = Parcel(id: nil, label: "w\(worker)-\(index)", weight: nil, fragile: false, photo: Data(), state: .waiting, previous: nil, count: index)
                        try pool.write { db in try parcel.insert(db) }
                    } else {
                        _ = try pool.read { db in try Parcel.fetchAll(db, "WHERE count = ?", arguments: [index]) }
                    }
                }
            } catch {
                failures.add("\(error)")
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all)")
        #expect(try pool.read { try Parcel.fetchCount($0) } == 201)
    }

    @Test("more distinct statements than the cache holds all run (the cache drops old ones)")
    func statementCache() throws {
        let pool = try pool()
        let sums = try pool.read { db in try (0..<200).map { try db.value(Int.self, sql: "SELECT \($0) + ?", arguments: [1]) ?? -1 } }
        #expect(sums == Array(1...200))
    }

    @Test("migrations run once, in order; a database that GRDB migrated keeps its rows and gets only the newer steps")
    func migrations() throws {
        let path = temporaryPath()
        // What GRDB's migrator left in a unit's database: its own table of applied names.
        do {
            let db = try Database(path: path, readOnly: false)
            try db.execute(sql: """
                CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                INSERT INTO grdb_migrations VALUES ('v1');
                CREATE TABLE note (id INTEGER PRIMARY KEY, text TEXT NOT NULL);
                INSERT INTO note (text) VALUES ('kept');
                """)
        }
        let pool = try DatabasePool(path: path)
        var migrator = Migrator()
        migrator.registerMigration("v1") { db in try db.execute(sql: "CREATE TABLE note (id INTEGER PRIMARY KEY, text TEXT NOT NULL)") }
        migrator.registerMigration("v2") { db in try db.execute(sql: "ALTER TABLE note ADD COLUMN extra TEXT") }
        migrator.registerMigration("v3") { db in try db.execute(sql: "CREATE TABLE other (id INTEGER PRIMARY KEY)") }
        try migrator.migrate(pool, upTo: "v2")
        #expect(try pool.read { try migrator.appliedMigrations($0) } == ["v1", "v2"])
        try migrator.migrate(pool)
        try migrator.migrate(pool)
        #expect(try pool.read { try migrator.appliedMigrations($0) } == ["v1", "v2", "v3"])
        #expect(try pool.read { try $0.values(String.self, sql: "SELECT text FROM note") } == ["kept"])
        // A failing step leaves the schema as it was before it.
        migrator.registerMigration("v4") { db in
            try db.execute(sql: "CREATE TABLE half (id INTEGER)")
            try db.execute(sql: "CREATE TABLE note (id INTEGER)")
        }
        #expect(throws: SQLiteError.self) { try migrator.migrate(pool) }
        #expect(try pool.read { try $0.value(Int.self, sql: "SELECT COUNT(*) FROM sqlite_master WHERE name = 'half'") } == 0)
        #expect(try pool.read { try migrator.appliedMigrations($0) } == ["v1", "v2", "v3"])
    }

    @Test("the pool's connections run in WAL with the configured page cache; a read-only connection cannot write")
    func configuration() throws {
        let path = temporaryPath()
        var configuration = DatabasePool.Configuration()
        configuration.cacheKiB = 256
        let pool = try DatabasePool(path: path, configuration: configuration)
        #expect(try pool.read { try $0.value(String.self, sql: "PRAGMA journal_mode") } == "wal")
        #expect(try pool.read { try $0.value(Int.self, sql: "PRAGMA cache_size") } == -256)
        #expect(throws: SQLiteError.self) { try pool.read { try $0.execute(sql: "CREATE TABLE x (id INTEGER)") } }
        let readOnly = try Database(path: path, readOnly: true)
        #expect(throws: SQLiteError.self) { try readOnly.execute(sql: "CREATE TABLE x (id INTEGER)") }
    }
}

private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [String] = []
    func add(_ error: String) { lock.withLock { errors.append(error) } }
    var all: [String] { lock.withLock { errors } }
}
