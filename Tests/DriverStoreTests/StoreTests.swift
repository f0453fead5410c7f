import DriverAPI
import DriverDomain
@testable import DriverStore
import Foundation
import SQLiteKit
import Testing

@Suite("Store and ping recorder")
struct StoreTests {
    /// Every migration, in order: what an upgraded or new database has applied (the list a new migration extends).
    static let allMigrations = [
        "v1_pings", "v2_outbox", "v3_tasks", "v4_pushes", "v5_time_source", "v6_unit_state", "v7_visits", "v8_travel",
        "v9_harsh_events", "v10_remote_config", "v11_fleet_requests", "v12_ping_ids", "v13_vehicle", "v14_push_cursor", "v15_set_aside_row", "v16_answered_offer",
    ]

    static func temporaryDirectory() -> String {
        var template = Array("/tmp/driverd-store-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    /// Pings on disk: in the database, or in the log (folded in first).
    static func stored(_ store: Store, order: String = "ORDER BY id") throws -> [PingRecord] {
        try store.foldPingLog()
        return try store.pool.read { try PingRecord.fetchAll($0, order) }
    }

    /// The odometer's state on disk (folded in from the log first).
    static func travel(_ store: Store) throws -> TravelRecord? {
        try store.foldPingLog()
        return try store.pool.read { try TravelRecord.fetchOne($0) }
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
            #expect(try store.appliedMigrations() == StoreTests.allMigrations)
            let recorder = PingRecorder(store: store)
            for t in 0..<10 { recorder.append(Self.ping(Double(t)), now: 0, nextSampleIn: 0) }
            recorder.flush()
            #expect(recorder.kept == 10)
        }
        let reopened = try Store(directory: directory)
        #expect(try reopened.pool.read { try PingRecord.fetchCount($0) } == 10)
        let journalMode = try reopened.pool.read { try $0.value(String.self, sql: "PRAGMA journal_mode") }
        #expect(journalMode == "wal")
    }

    @Test("group commit: fast rates batch until the window ends; slow rates commit at once")
    func groupCommit() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let recorder = PingRecorder(store: store, movingWindow: 5, stationaryWindow: 5)
        // 1 Hz: the batch is committed when the next sample would be more than 5 s after the oldest.
        for t in 0..<4 { #expect(!recorder.append(Self.ping(Double(t)), now: 100 + Double(t), nextSampleIn: 1)) }
        #expect(recorder.kept == 0 && recorder.pendingCount == 4)
        #expect(recorder.append(Self.ping(4), now: 104.2, nextSampleIn: 1))
        #expect(recorder.kept == 5 && recorder.pendingCount == 0)
        // A batch whose stream stopped is committed by its deadline.
        #expect(recorder.commitIfDue(now: 200) == nil)
        recorder.append(Self.ping(5), now: 200, nextSampleIn: 1)
        #expect(recorder.commitIfDue(now: 203) == 2)
        #expect(recorder.commitIfDue(now: 205.1) == nil)
        #expect(recorder.kept == 6 && recorder.pendingCount == 0)
        // 0.1 Hz: each ping at once.
        #expect(recorder.append(Self.ping(10, motion: .stationary), now: 110, nextSampleIn: 10))
        #expect(recorder.kept == 7)
        #expect(recorder.keptByMotion == ["moving": 6, "stationary": 1])
        #expect(try Self.stored(store).count == 7)
    }

    @Test("a stationary ping waits its longer window: the next sample's append writes both when the window would pass before the one after")
    func stationaryWindow() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let recorder = PingRecorder(store: store, movingWindow: 7, stationaryWindow: 12)
        #expect(!recorder.append(Self.ping(0, motion: .stationary), now: 100, nextSampleIn: 10))
        #expect(recorder.append(Self.ping(10, motion: .stationary), now: 110, nextSampleIn: 10))
        #expect(try Self.stored(store).count == 2)
    }

    @Test("pings the backend acknowledges within their window are never written")
    func deliveredFromMemory() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let recorder = PingRecorder(store: store, movingWindow: 7, stationaryWindow: 12)
        for t in 0..<3 { #expect(!recorder.append(Self.ping(Double(t)), now: 100 + Double(t), nextSampleIn: 1)) }
        let batches = recorder.claimBatches(maxPings: 500, carrying: true) { "b1" }
        let batch = try #require(batches.first)
        #expect(batches.count == 1 && batch.batchId == "b1" && batch.pings.map(\.fixTime) == [0, 1, 2] && batch.pings.allSatisfy { $0.batchId == "b1" })
        #expect(recorder.claimBatches(maxPings: 500, carrying: true) { "b2" } == [], "one request from memory at a time")
        recorder.sent(acknowledged: ["b1"])
        #expect(recorder.kept == 3 && recorder.delivered == 3 && recorder.pendingCount == 0)
        #expect(try Self.stored(store).isEmpty)
        #expect(recorder.commitIfDue(now: 200) == nil)
    }

    @Test("a batch whose answer comes after its window is written under its batch id; the answer then deletes the rows")
    func slowAnswer() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let recorder = PingRecorder(store: store, movingWindow: 7, stationaryWindow: 12)
        recorder.append(Self.ping(0), now: 100, nextSampleIn: 1)
        #expect(recorder.claimBatches(maxPings: 500, carrying: true) { "slow" }.map(\.batchId) == ["slow"])
        #expect(recorder.append(Self.ping(6), now: 106.5, nextSampleIn: 1), "the window of the ping in flight ends before the next sample")
        let rows = try Self.stored(store, order: "ORDER BY fix_time")
        #expect(rows.map(\.batchId) == ["slow", nil])
        recorder.sent(acknowledged: ["slow"])
        #expect(try Self.stored(store).map(\.fixTime) == [6])
        #expect(recorder.kept == 2 && recorder.delivered == 0)
    }

    @Test("a batch that was not acknowledged goes again unchanged, carried before the newer pings' batch; each acked one leaves alone")
    func failedSend() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let recorder = PingRecorder(store: store, movingWindow: 7, stationaryWindow: 12)
        for t in 0..<2 { recorder.append(Self.ping(Double(t)), now: 100 + Double(t), nextSampleIn: 1) }
        #expect(recorder.claimBatches(maxPings: 500, carrying: true) { "first" }.map(\.batchId) == ["first"])
        recorder.sent(acknowledged: [])
        recorder.append(Self.ping(2), now: 102, nextSampleIn: 1)
        let again = recorder.claimBatches(maxPings: 500, carrying: true) { "second" }
        #expect(again.map(\.batchId) == ["first", "second"] && again.map { $0.pings.map(\.fixTime) } == [[0, 1], [2]])
        // Lost again: both stay, under their ids, and the next claim adds the newest pings as a third.
        recorder.sent(acknowledged: [])
        recorder.append(Self.ping(3), now: 103, nextSampleIn: 1)
        #expect(recorder.claimBatches(maxPings: 500, carrying: true) { "third" }.map(\.batchId) == ["first", "second", "third"])
        // A backend that acked only the live batch (it does not take carried ones): the others stay for their own turns.
        recorder.sent(acknowledged: ["third", "unknown"])
        #expect(recorder.pendingCount == 3 && recorder.delivered == 1)
        // Not carrying: the oldest lost batch alone, unchanged; the newest pings wait behind it.
        recorder.append(Self.ping(4), now: 104, nextSampleIn: 1)
        let alone = recorder.claimBatches(maxPings: 500, carrying: false) { "fourth" }
        #expect(alone.map(\.batchId) == ["first"] && alone.first?.pings.map(\.fixTime) == [0, 1])
        recorder.sent(acknowledged: ["first"])
        #expect(recorder.claimBatches(maxPings: 500, carrying: false) { "fourth" }.map(\.batchId) == ["second"])
        recorder.sent(acknowledged: ["second"])
        #expect(recorder.claimBatches(maxPings: 500, carrying: false) { "fourth" }.map { $0.pings.map(\.fixTime) } == [[4]])
        recorder.sent(acknowledged: ["fourth"])
        #expect(try recorder.pendingCount == 0 && recorder.delivered == 5 && Self.stored(store).isEmpty)
    }

    @Test("a request from memory holds at most the ping limit: a lost batch that does not fit waits for its own, the new batch takes what is left")
    func claimLimit() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let recorder = PingRecorder(store: store, movingWindow: 70, stationaryWindow: 70)
        for t in 0..<4 { recorder.append(Self.ping(Double(t)), now: 100 + Double(t), nextSampleIn: 1) }
        #expect(recorder.claimBatches(maxPings: 3, carrying: true) { "a" }.map { $0.pings.count } == [3])
        recorder.sent(acknowledged: [])
        for t in 4..<6 { recorder.append(Self.ping(Double(t)), now: 100 + Double(t), nextSampleIn: 1) }
        // "a" (3) leaves room for none: alone. Acked, the new pings come next, as many as the limit (2 here) takes.
        #expect(recorder.claimBatches(maxPings: 3, carrying: true) { "b" }.map(\.batchId) == ["a"])
        recorder.sent(acknowledged: ["a"])
        let next = recorder.claimBatches(maxPings: 2, carrying: true) { "b" }
        #expect(next.map(\.batchId) == ["b"] && next.first?.pings.map(\.fixTime) == [3, 4])
    }

    @Test("what waits on disk rides with the next request: lost batches whole, oldest first, within the ping limit, not the ones memory sends; then the oldest pings in no batch as a new one")
    func carriedFromDisk() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let recorder = PingRecorder(store: store, movingWindow: 7, stationaryWindow: 7)
        // Two batches lost, then written by their window (into the log, which the claim folds in).
        for (t, id) in [(0, "x"), (10, "y")] {
            recorder.append(Self.ping(Double(t)), now: 100 + Double(t), nextSampleIn: 1)
            recorder.append(Self.ping(Double(t + 1)), now: 101 + Double(t), nextSampleIn: 1)
            #expect(recorder.claimBatches(maxPings: 500, carrying: false) { id }.map(\.batchId) == [id])
            recorder.sent(acknowledged: [])
            #expect(recorder.commitIfDue(now: 108 + Double(t)) == nil)
        }
        let outbox = Outbox(store: store)
        #expect(try outbox.claimBatchesToCarry(maxPings: 500, excluding: []) { "new" }.map(\.batchId) == ["x", "y"])
        #expect(try outbox.claimBatchesToCarry(maxPings: 500, excluding: ["x"]) { "new" }.map { $0.pings.map(\.fixTime) } == [[10, 11]])
        #expect(try outbox.claimBatchesToCarry(maxPings: 3, excluding: []) { "new" }.map(\.batchId) == ["x"], "y does not fit beside x")
        #expect(try outbox.claimBatchesToCarry(maxPings: 0, excluding: []) { "new" } == [])
        try outbox.ackPingBatch("x")
        // Three pings no turn took, written by their window: the oldest of them fill the room left, as one new batch.
        for t in 20..<23 { recorder.append(Self.ping(Double(t)), now: 100 + Double(t), nextSampleIn: 1) }
        #expect(recorder.commitIfDue(now: 130) == nil)
        // With nothing in memory to send, the disk's pings ride only if all of them fit (else the newest goes first).
        #expect(try outbox.claimBatchesToCarry(maxPings: 4, excluding: [], onlyIfAllFit: true) { "new" } == [])
        let carried = try outbox.claimBatchesToCarry(maxPings: 4, excluding: []) { "new" }
        #expect(carried.map(\.batchId) == ["y", "new"] && carried.map { $0.pings.map(\.fixTime) } == [[10, 11], [20, 21]])
        #expect(carried.last?.pings.allSatisfy { $0.batchId == "new" } == true)
        // Claimed: next time "new" is a batch sent before; the last ping follows it, and all of it fits.
        #expect(try outbox.claimBatchesToCarry(maxPings: 500, excluding: [], onlyIfAllFit: true) { "newer" }.map(\.batchId) == ["y", "new", "newer"])
    }

    @Test("the odometer's state is written with the pings or alone after its window; a fix that moves only its anchor asks for no write")
    func travelState() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let recorder = PingRecorder(store: store, movingWindow: 7, stationaryWindow: 12)
        var travel = TravelRecord()
        travel.metres = 120
        recorder.noteTravel(travel, now: 100)
        #expect(recorder.commitIfDue(now: 100) == PingRecorder.travelWindow)
        #expect(recorder.commitIfDue(now: 100 + PingRecorder.travelWindow) == nil)
        #expect(try Self.travel(store)?.metres == 120)
        travel.anchorTime = 5
        recorder.noteTravel(travel, now: 200)
        #expect(recorder.commitIfDue(now: 300) == nil, "nothing waits")
        travel.metres = 130
        recorder.noteTravel(travel, now: 300)
        #expect(recorder.commitIfDue(now: 301) != nil)
        // Its window ends while pings wait for the backend's answer: it is written alone, the pings stay in memory.
        for t in 0..<3 { recorder.append(Self.ping(Double(t)), now: 325 + Double(t), nextSampleIn: 1) }
        #expect(recorder.commitIfDue(now: 330) != nil)
        #expect(try Self.travel(store)?.metres == 130)
        #expect(try recorder.pendingCount == 3 && Self.stored(store).isEmpty)
    }

    @Test("ping ids never go back, even after every ping was acknowledged and the table emptied")
    func idsNeverGoBack() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let recorder = PingRecorder(store: store), outbox = Outbox(store: store)
        for t in 0..<3 { recorder.append(Self.ping(Double(t)), now: 0, nextSampleIn: 100) }
        let batch = try #require(try outbox.claimPingBatch(maxPings: 500) { "b" })
        #expect(batch.pings.compactMap(\.id).max() == 3)
        try outbox.ackPingBatch("b")
        #expect(try store.pool.read { try PingRecord.fetchCount($0) } == 0)
        recorder.append(Self.ping(3), now: 0, nextSampleIn: 100)
        #expect(try Self.stored(store).map(\.id) == [4])
    }

    @Test("a failed write keeps the pings pending and reports the error")
    func failedWrite() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let recorder = PingRecorder(store: store)
        // The log cannot be opened (as on a full or failing disk).
        #expect(mkdir(directory + "/pings.log", 0o700) == 0)
        recorder.append(Self.ping(0), now: 0, nextSampleIn: 10)
        #expect(recorder.kept == 0)
        #expect(recorder.pendingCount == 1)
        #expect(recorder.lastError?.contains("pings.log") == true, "\(recorder.lastError ?? "no error")")
        #expect(rmdir(directory + "/pings.log") == 0)
        recorder.flush()
        #expect(recorder.kept == 1 && recorder.pendingCount == 0 && recorder.lastError == nil)
        #expect(try Self.stored(store).count == 1)
    }
}
