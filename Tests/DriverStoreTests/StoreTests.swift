import DriverAPI
import DriverDomain
@testable import DriverStore
import Foundation
import SQLiteKit
import Testing

@Suite("Store and ping recorder")
struct StoreTests {
    static func temporaryDirectory() -> String {
        var template = Array("/tmp/driverd-store-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    static func ping(_ t: Double, motion: Motion = .moving) -> PingRecord {
        PingRecord(fix: Fix(time: t, latitude: 52.5, longitude: 13.4, speed: 3), motion: motion, reason: .interval, recordedAt: t)
    }

    @Test("opening migrates; reopening keeps every row")
    func reopen() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let store = try Store(directory: directory)
            #expect(try store.appliedMigrations() == ["v1_pings", "v2_outbox", "v3_tasks", "v4_pushes", "v5_time_source", "v6_unit_state", "v7_visits", "v8_travel", "v9_harsh_events", "v10_remote_config", "v11_fleet_requests"])
            let recorder = PingRecorder(store: store)
            for t in 0..<10 { recorder.append(Self.ping(Double(t)), now: 0, nextSampleIn: 0) }
            recorder.flush()
            #expect(recorder.committed == 10)
        }
        let reopened = try Store(directory: directory)
        #expect(try reopened.pool.read { try PingRecord.fetchCount($0) } == 10)
        let journalMode = try reopened.pool.read { try $0.value(String.self, sql: "PRAGMA journal_mode") }
        #expect(journalMode == "wal")
    }

    @Test("group commit: fast rates batch until the deadline; slow rates commit at once")
    func groupCommit() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let recorder = PingRecorder(store: store, maxDelay: 5)
        // 1 Hz: the batch is committed when the next sample would be more than 5 s after the oldest.
        for t in 0..<4 { #expect(!recorder.append(Self.ping(Double(t)), now: 100 + Double(t), nextSampleIn: 1)) }
        #expect(recorder.committed == 0 && recorder.pendingCount == 4)
        #expect(recorder.append(Self.ping(4), now: 104.2, nextSampleIn: 1))
        #expect(recorder.committed == 5 && recorder.pendingCount == 0)
        // A batch whose stream stopped is committed by its deadline.
        #expect(recorder.commitIfDue(now: 200) == nil)
        recorder.append(Self.ping(5), now: 200, nextSampleIn: 1)
        #expect(recorder.commitIfDue(now: 203) == 2)
        #expect(recorder.commitIfDue(now: 205.1) == nil)
        #expect(recorder.committed == 6 && recorder.pendingCount == 0)
        // 0.1 Hz: each ping at once.
        #expect(recorder.append(Self.ping(10, motion: .stationary), now: 110, nextSampleIn: 10))
        #expect(recorder.committed == 7)
        #expect(recorder.committedByMotion == ["moving": 6, "stationary": 1])
    }

    @Test("a failed write keeps the pings pending and reports the error")
    func failedWrite() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let recorder = PingRecorder(store: store)
        try store.pool.write { try $0.execute(sql: "CREATE TRIGGER refuse BEFORE INSERT ON ping BEGIN SELECT RAISE(ABORT, 'disk full'); END") }
        recorder.append(Self.ping(0), now: 0, nextSampleIn: 10)
        #expect(recorder.committed == 0)
        #expect(recorder.pendingCount == 1)
        #expect(recorder.lastError?.contains("disk full") == true)
        try store.pool.write { try $0.execute(sql: "DROP TRIGGER refuse") }
        recorder.flush()
        #expect(recorder.committed == 1 && recorder.pendingCount == 0 && recorder.lastError == nil)
    }
}
