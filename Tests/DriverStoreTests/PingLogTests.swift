import DriverAPI
@testable import DriverStore
import Foundation
import SQLiteKit
import Testing

@Suite("Ping log")
struct PingLogTests {
    @Test("records come back as written: every field, absent ones too, and the odometer's state")
    func roundTrip() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var log = PingLog(directory: directory)
        var full = PingRecord(
            fix: Fix(time: 10, latitude: 52.5, longitude: 13.4, altitude: 34, speed: 3, track: 90, climb: 0.5, horizontalError: 4, verticalError: 6, mode: 3, satellitesUsed: 9),
            motion: .moving, reason: .heading, recordedAt: 11, timeSource: .gps)
        full.id = 7
        full.batchId = "batch-1"
        var bare = PingRecord(fix: Fix(time: 12, latitude: -1, longitude: -2, mode: 2), motion: .stationary, reason: .interval, recordedAt: 13)
        bare.id = 8
        var travel = TravelRecord()
        travel.metres = 1234.5
        try log.append([.ping(full), .ping(bare), .travel(travel)])
        #expect(try log.read() == [.ping(full), .ping(bare), .travel(travel)])
        #expect(log.pings == 2)
    }

    @Test("a torn last record (a power cut in its write) is dropped; the ones before it are kept")
    func tornTail() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var log = PingLog(directory: directory)
        let pings = (0..<3).map { t -> PingRecord in
            var ping = StoreTests.ping(Double(t))
            ping.id = Int64(t + 1)
            return ping
        }
        try log.append([.ping(pings[0]), .ping(pings[1])])
        try log.append([.ping(pings[2])])
        let size = try #require(try DurableFile.regularFileSize(log.path))
        for cut in [size - 1, size - 20, size - 60] {
            #expect(truncate(log.path, off_t(cut)) == 0)
            #expect(try log.read() == [.ping(pings[0]), .ping(pings[1])], "cut at \(cut) of \(size)")
        }
        // A flipped byte inside the last whole record is caught by its checksum (three records of one size).
        #expect(truncate(log.path, off_t(size / 3 * 2)) == 0)
        #expect(try log.read().count == 2)
        var bytes = [UInt8](try #require(try DurableFile.contents(log.path)))
        bytes[bytes.count - 5] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: log.path))
        #expect(try log.read() == [.ping(pings[0])])
    }

    @Test("a whole record of a kind this release does not know is passed over and the records after it still count; a record that cannot be encoded is refused before a byte is written")
    func unknownAndUnencodable() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var log = PingLog(directory: directory)
        var first = StoreTests.ping(1), second = StoreTests.ping(2)
        (first.id, second.id) = (1, 2)
        try log.append([.ping(first)])
        // A record of kind 9, whole (its checksum matches), as a later release might write.
        let body: [UInt8] = [9, 1, 2, 3]
        var record: [UInt8] = []
        for value in [UInt32(body.count), CRC32.checksum(body[...])] { withUnsafeBytes(of: value.littleEndian) { record += $0 } }
        let handle = try #require(FileHandle(forWritingAtPath: log.path))
        try handle.seekToEnd()
        try handle.write(contentsOf: record + body)
        try handle.close()
        try log.append([.ping(second)])
        #expect(try log.read() == [.ping(first), .ping(second)])

        let size = try DurableFile.regularFileSize(log.path)
        var travel = TravelRecord()
        travel.metres = .nan
        #expect(throws: (any Error).self) { try log.append([.ping(first), .travel(travel)]) }
        #expect(try DurableFile.regularFileSize(log.path) == size)
        #expect(try log.read() == [.ping(first), .ping(second)])
    }

    @Test("DurableFile: no file is nil, a directory is nil, a file is its size; contents alike")
    func sizeIfPresent() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try DurableFile.sizeIfPresent(directory + "/absent") == nil)
        #expect(try DurableFile.contents(directory + "/absent") == nil)
        #expect(try DurableFile.sizeIfPresent(directory) == nil)
        try DurableFile.write(Data("abc".utf8), to: directory + "/file")
        #expect(try DurableFile.sizeIfPresent(directory + "/file") == 3)
        // A path through a file is not "no file": it is an error (ENOTDIR), never read as absent.
        #expect(throws: DurableFile.Failure.self) { try DurableFile.sizeIfPresent(directory + "/file/under") }
    }

    @Test("a fold repeated after a power cut before the log was emptied adds nothing twice; ids go on above both")
    func foldTwice() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        try store.logPings([StoreTests.ping(0), StoreTests.ping(1)], travel: nil)
        let logged = try Data(contentsOf: URL(fileURLWithPath: directory + "/pings.log"))
        try store.foldPingLog()
        // The log as it was before it was emptied: the fold runs again at the next start.
        try logged.write(to: URL(fileURLWithPath: directory + "/pings.log"))
        let reopened = try Store(directory: directory)
        #expect(try reopened.pool.read { try PingRecord.fetchAll($0, "ORDER BY id") }.map(\.id) == [1, 2])
        try reopened.logPings([StoreTests.ping(2)], travel: nil)
        try reopened.foldPingLog()
        #expect(try reopened.pool.read { try PingRecord.fetchAll($0, "ORDER BY id") }.map(\.id) == [1, 2, 3])
        #expect(reopened.loggedPings == 0)
    }
}

@Suite("Ping log, long offline")
struct PingLogVolumeTests {
    @Test("hours of group commits folded as they come: every ping ends up in the database once")
    func volume() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let recorder = PingRecorder(store: store, movingWindow: 7, stationaryWindow: 12)
        for t in 0..<5000 { recorder.append(StoreTests.ping(Double(t)), now: Double(t), nextSampleIn: 1) }
        recorder.flushIntoStore()
        let stored = try store.pool.read { try PingRecord.fetchAll($0, "ORDER BY id") }
        #expect(stored.count == 5000 && recorder.kept == 5000)
        #expect(Set(stored.map(\.fixTime)).count == 5000)
    }
}
