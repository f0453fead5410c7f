import DriverAPI
@testable import DriverStore
import Foundation
import SQLiteKit
import Synchronization
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

    @Test("after a restart with no log (all folded), new pings are numbered above the database's and none is lost")
    func idsAfterRestartWithoutLog() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let store = try Store(directory: directory)
            try store.logPings([StoreTests.ping(0), StoreTests.ping(1)], travel: nil)
            try store.foldPingLog()
            #expect(try DurableFile.sizeIfPresent(directory + "/pings.log") == nil)
        }
        let reopened = try Store(directory: directory)
        try reopened.logPings([StoreTests.ping(2)], travel: nil)
        try reopened.foldPingLog()
        #expect(try reopened.pool.read { try PingRecord.fetchAll($0, "ORDER BY id") }.map(\.fixTime) == [0, 1, 2])
    }

    @Test("a log set aside by a fold that a power cut stopped is folded at the next start, before the newer log")
    func setAsideAtStart() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let store = try Store(directory: directory)
            try store.logPings([StoreTests.ping(0), StoreTests.ping(1)], travel: nil)
            // The fold's rename, then the cut (the database never saw these); the reader went on in a new file.
            #expect(try store.pingLog.withLock { try $0.setAside() })
            var travel = TravelRecord()
            travel.metres = 42
            try store.logPings([StoreTests.ping(2)], travel: travel)
            #expect(store.loggedPings == 3)
        }
        let reopened = try Store(directory: directory)
        #expect(try reopened.pool.read { try PingRecord.fetchAll($0, "ORDER BY id") }.map(\.fixTime) == [0, 1, 2])
        #expect(try reopened.pool.read { try TravelRecord.fetchOne($0) }?.metres == 42)
        #expect(reopened.loggedPings == 0)
        #expect(try DurableFile.sizeIfPresent(directory + "/pings.log") == nil)
        #expect(try DurableFile.sizeIfPresent(directory + "/pings.folding.log") == nil)
        try reopened.logPings([StoreTests.ping(3)], travel: nil)
        try reopened.foldPingLog()
        #expect(try reopened.pool.read { try PingRecord.fetchAll($0, "ORDER BY id") }.map(\.id) == [1, 2, 3, 4])
    }

    @Test("the reader's group commit does not wait for a fold that waits for the database's writer")
    func appendBesideFold() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        try store.logPings([StoreTests.ping(0)], travel: nil)
        // A long durable write (a driver's transition on a slow disk) holds the one writer.
        let writer = Gate(), writing = DispatchSemaphore(value: 0)
        let writerDone = Self.onThread { _ = try store.writeDurably { _ in writing.signal(); writer.wait() } }
        writing.wait()
        let foldDone = Self.onThread { try store.foldPingLog() }
        // Time for the fold to reach the writer (the old fold waited there holding the log).
        Thread.sleep(forTimeInterval: 0.3)
        let appendDone = Self.onThread { try store.logPings([StoreTests.ping(1)], travel: nil) }
        let appended = appendDone.ends(within: 5)
        writer.open()
        #expect(appended, "the append waited for the fold")
        for running in [writerDone, foldDone, appendDone] { #expect(running.end() == nil) }
        #expect(try StoreTests.stored(store).map(\.fixTime) == [0, 1])
    }

    @Test("the recorder's fold of a long offline log runs beside its group commits, not in front of them")
    func recorderFoldBesideCommits() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let recorder = PingRecorder(store: store, movingWindow: 1, stationaryWindow: 1)
        let writer = Gate(), writing = DispatchSemaphore(value: 0)
        let writerDone = Self.onThread { _ = try store.writeDurably { _ in writing.signal(); writer.wait() } }
        writing.wait()
        // Past the fold's threshold, every sample due at once (a commit each): none may wait for the held writer.
        let count = PingRecorder.foldPings + 50
        let appendDone = Self.onThread {
            for t in 0..<count { recorder.append(StoreTests.ping(Double(t)), now: Double(t), nextSampleIn: 2) }
        }
        let appended = appendDone.ends(within: 10)
        writer.open()
        #expect(appended, "a group commit waited for the fold")
        for running in [writerDone, appendDone] { #expect(running.end() == nil) }
        recorder.flushIntoStore()
        #expect(try StoreTests.stored(store).count == count)
        #expect(recorder.lastError == nil)
    }

    /// Runs `body` on a thread of its own.
    static func onThread(_ body: @escaping @Sendable () throws -> Void) -> OnThread { OnThread(body) }
}

/// A body running on a thread of its own: its end and its error.
final class OnThread: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let failure = Mutex<String?>(nil)

    init(_ body: @escaping @Sendable () throws -> Void) {
        Thread.detachNewThread { [self] in
            do { try body() } catch { failure.withLock { $0 = "\(error)" } }
            done.signal()
        }
    }

    /// Whether it ended within `seconds`.
    func ends(within seconds: Double) -> Bool {
        guard done.wait(timeout: .now() + seconds) == .success else { return false }
        done.signal()
        return true
    }

    /// Waits for its end; its error, if any.
    func end() -> String? {
        done.wait()
        done.signal()
        return failure.withLock { $0 }
    }
}

/// A gate threads wait at until it opens.
final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func wait() {
        semaphore.wait()
        semaphore.signal()
    }
    func open() { semaphore.signal() }
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
