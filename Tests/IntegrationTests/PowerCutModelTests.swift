import Foundation
import SQLiteKit
import Testing

/// The power-cut file system keeps only what was synced: proven on SQLite in WAL mode (what driverd runs on) and on
/// plain files, so the journey's guarantees mean something.
@Suite("Power-cut file system", .ownThread)
struct PowerCutModelTests {
    static func open(_ directory: String) throws -> Database {
        let db = try Database(path: directory + "/t.sqlite", readOnly: false)
        #expect(try db.value(String.self, sql: "PRAGMA journal_mode = WAL") == "wal")
        return db
    }

    @Test("a WAL commit at synchronous=NORMAL is lost at a cut, one at FULL is not; the database is whole after it")
    func sqliteCommits() throws {
        let directory = TemporaryDirectory("powercut")
        let fs = try PowerCutFS(mountpoint: directory.file("state"))
        do {
            let db = try Self.open(fs.mountpoint)
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "CREATE TABLE t (x INTEGER)")
            try db.execute(sql: "INSERT INTO t VALUES (1)")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "INSERT INTO t VALUES (2)")
            #expect(try db.values(Int.self, sql: "SELECT x FROM t") == [1, 2])
            // The power goes with the connection still open (a close would checkpoint, and sync, the log).
            try fs.cut(tear: false)
        }
        try fs.mount()
        let db = try Self.open(fs.mountpoint)
        #expect(try db.values(Int.self, sql: "SELECT x FROM t") == [1], "the FULL commit survives, the NORMAL one does not")
        #expect(try db.value(String.self, sql: "PRAGMA integrity_check") == "ok")
    }

    @Test("a renamed file whose directory was not synced vanishes at a cut; synced data under a synced name stays")
    func renames() throws {
        let directory = TemporaryDirectory("powercut")
        let fs = try PowerCutFS(mountpoint: directory.file("state"))
        func write(_ name: String, _ text: String, syncDirectory: Bool) throws {
            let path = fs.mountpoint + "/" + name
            let fd = Glibc.open(path + ".new", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            #expect(fd >= 0)
            _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
            #expect(fsync(fd) == 0)
            close(fd)
            #expect(rename(path + ".new", path) == 0)
            if syncDirectory {
                let dir = Glibc.open(fs.mountpoint, O_RDONLY | O_DIRECTORY)
                #expect(fsync(dir) == 0)
                close(dir)
            }
        }
        try write("kept", "synced twice", syncDirectory: true)
        try write("lost", "data synced, name not", syncDirectory: false)
        #expect(FileManager.default.createFile(atPath: fs.mountpoint + "/never-synced", contents: Data("x".utf8)))
        #expect(FileManager.default.fileExists(atPath: fs.mountpoint + "/lost"))
        try fs.cut(tear: false)
        try fs.mount()
        #expect(try String(contentsOfFile: fs.mountpoint + "/kept", encoding: .utf8) == "synced twice")
        #expect(!FileManager.default.fileExists(atPath: fs.mountpoint + "/lost"))
        #expect(!FileManager.default.fileExists(atPath: fs.mountpoint + "/lost.new"))
        #expect(!FileManager.default.fileExists(atPath: fs.mountpoint + "/never-synced"))
    }

    @Test("a torn write keeps a prefix of the last unsynced write, cut at a 512-byte sector boundary, over the synced data")
    func tornWrite() throws {
        let directory = TemporaryDirectory("powercut")
        // Seeds whose tear keeps part of the write (the first draws may keep all or none of it).
        for seed in 0..<8 {
            let fs = try PowerCutFS(mountpoint: directory.file("state-\(seed)"), seed: seed)
            let path = fs.mountpoint + "/f"
            let fd = Glibc.open(path, O_RDWR | O_CREAT, 0o600)
            let old = [UInt8](repeating: 0x41, count: 4096)
            _ = old.withUnsafeBytes { pwrite(fd, $0.baseAddress, 4096, 0) }
            #expect(fsync(fd) == 0)
            let dir = Glibc.open(fs.mountpoint, O_RDONLY | O_DIRECTORY)
            #expect(fsync(dir) == 0)
            close(dir)
            let new = [UInt8](repeating: 0x42, count: 3000)
            _ = new.withUnsafeBytes { pwrite(fd, $0.baseAddress, 3000, 100) }
            close(fd)
            let cut = try fs.cut(tear: true)
            try fs.mount()
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let torn = try #require(cut.torn)
            #expect(torn.offset == 100 && torn.length == 3000)
            #expect(torn.kept == 0 || torn.kept == 3000 || (100 + torn.kept) % 512 == 0, "a tear ends on a sector boundary: \(torn)")
            #expect(bytes.count == 4096)
            #expect(bytes[..<100].allSatisfy { $0 == 0x41 } && bytes[100..<(100 + torn.kept)].allSatisfy { $0 == 0x42 })
            #expect(bytes[(100 + torn.kept)...].allSatisfy { $0 == 0x41 }, "nothing after the tear reached the disk")
            fs.unmount()
        }
    }
}
