import DriverAPI
@testable import DriverStore
import Foundation
@testable import SQLiteKit
import Synchronization
import Testing

/// The store's health and the writers that must never spin on it: each write path against ENOSPC, EROFS and EIO,
/// injected (debug builds), with the real file system underneath. The real full and read-only file systems are the
/// integration suite's (`StorageFaultTests`).
@Suite("Store health")
struct StoreHealthTests {
    static let faults: [(errno: Int32, condition: StoreStatus.Condition)] = [(ENOSPC, .full), (EROFS, .readOnly), (EIO, .failing)]

    @Test("each failure is what it is: SQLite's codes and the errno behind them, the spools' errnos; anything else is not the disk's")
    func classification() {
        for (errno, condition) in Self.faults {
            #expect(StoreHealth.condition(of: SQLiteError.injected(errno: errno)) == condition, "SQLite with errno \(errno)")
            #expect(StoreHealth.condition(of: DurableFile.Failure(call: "write", path: "/x", errno: errno)) == condition, "file errno \(errno)")
        }
        // SQLite reports a read-only remount as an I/O error: the errno tells it from a failing disk.
        #expect(StoreHealth.condition(of: SQLiteError(resultCode: 10 | (3 << 8), message: "disk I/O error", systemErrno: EROFS)) == .readOnly)
        #expect(StoreHealth.condition(of: SQLiteError(resultCode: 13, message: "database or disk is full")) == .full)
        #expect(StoreHealth.condition(of: SQLiteError(resultCode: 8, message: "attempt to write a readonly database")) == .readOnly)
        #expect(StoreHealth.condition(of: SQLiteError(resultCode: 10, message: "disk I/O error")) == .failing)
        #expect(StoreHealth.condition(of: SQLiteError(resultCode: 19, message: "UNIQUE constraint failed")) == nil)
        #expect(StoreHealth.condition(of: DurableFile.Failure(call: "open", path: "/x", errno: EACCES)) == nil)
        #expect(StoreHealth.condition(of: CancellationError()) == nil)
    }

    @Test("a failure sets the condition and is told once; a write that succeeds ends it; a failure not the disk's changes nothing")
    func conditionChanges() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let health = StoreHealth(directory: directory, reserveBytes: 0)
        let told = Mutex<[StoreStatus.Condition]>([])
        health.onChange { status in told.withLock { $0.append(status.condition) } }
        #expect(health.check().condition == .ok && health.check().freeBytes != nil)
        for (errno, condition) in Self.faults {
            #expect(health.noteFailure(DurableFile.Failure(call: "write", path: directory, errno: errno)) == condition)
            #expect(health.noteFailure(DurableFile.Failure(call: "write", path: directory, errno: errno)) == condition)
            #expect(health.status.condition == condition && !health.canSave && !health.mayWriteBulk)
            #expect(health.status.detail == String(cString: strerror(errno)))
            health.noteWritten()
            #expect(health.status.condition == .ok && health.canSave && health.status.detail == nil)
        }
        #expect(health.noteFailure(DurableFile.Failure(call: "open", path: directory, errno: EACCES)) == nil)
        #expect(told.withLock { $0 } == [.full, .ok, .readOnly, .ok, .failing, .ok], "once per change")
        // A look at the file system ends a read-only condition (remounted) and a full one with room, never a failing disk.
        health.noteFailure(DurableFile.Failure(call: "write", path: directory, errno: EIO))
        #expect(health.check().condition == .failing)
        health.noteFailure(DurableFile.Failure(call: "write", path: directory, errno: EROFS))
        #expect(health.check().condition == .ok)
    }

    @Test("the kernel's mount table tells a read-only file system that statvfs does not: ext4's emergency_ro after an error, a read-only mount")
    func mountTable() {
        let table = """
            27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
            45 27 7:0 / /var/lib/driverd rw,relatime - ext4 /dev/loop0 rw,errors=remount-ro,emergency_ro
            46 27 7:1 / /mnt/a rw,relatime - ext4 /dev/loop1 rw,errors=remount-ro
            47 27 0:40 / /mnt/b ro,relatime - tmpfs tmpfs ro,size=1024k
            """
        // systemd's ProtectSystem=strict: the root file system bound read-only at /, read-write at the state directory.
        let hardened = """
            300 250 254:1 / / ro,relatime master:1 - ext4 /dev/vda1 rw,errors=remount-ro
            310 300 254:1 /var/lib/driverd /var/lib/driverd rw,relatime master:1 - ext4 /dev/vda1 rw,errors=remount-ro
            """
        #expect(!StoreHealth.readOnly(inMountInfo: hardened, device: "254:1"), "a read-only bind of a writable disk is statvfs's to tell")
        #expect(StoreHealth.readOnly(inMountInfo: table, device: "7:0"))
        #expect(!StoreHealth.readOnly(inMountInfo: table, device: "7:1"))
        #expect(StoreHealth.readOnly(inMountInfo: table, device: "0:40"), "a read-only super-block")
        #expect(!StoreHealth.readOnly(inMountInfo: table, device: "254:0"))
        #expect(!StoreHealth.readOnly(inMountInfo: table, device: "9:9"), "a device not in the table")
        #expect(!StoreHealth.kernelSaysReadOnly("/tmp"))
        // The real table is read (its size reads as 0): sysfs's super-block here is ro or rw.
        let sys = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8))?.split(separator: "\n").first { $0.contains(" /sys ") }
        if let sys { #expect(StoreHealth.kernelSaysReadOnly("/sys") == sys.split(separator: " ").last!.split(separator: ",").contains("ro")) }
    }

    @Test("a refusal says what it is: notSaved with the reason and the free bytes, never that it will be retried; a bug stays internalError")
    func refusal() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let health = StoreHealth(directory: directory, reserveBytes: 0)
        for (errno, condition) in Self.faults {
            let refusal = health.refusal("the delivery", SQLiteError.injected(errno: errno))
            #expect(refusal.kind == .notSaved && refusal.kind.wireCode == 1008)
            guard case .object(let data) = refusal.data else {
                Issue.record("no data")
                continue
            }
            #expect(data["reason"] == .string(condition.rawValue))
            #expect(data["freeBytes"] != nil)
            #expect(refusal.message.hasPrefix("the delivery was not saved: this unit's storage is "))
            #expect(!refusal.message.contains("retr"), "\(refusal.message)")
        }
        #expect(StoreStatus.Condition.readOnly.rawValue == "read-only")
        #expect(health.refusal("the delivery", SQLiteError(resultCode: 19, message: "constraint")).kind == .internalError)
    }

    @Test("the database's writes are heard: a full database refuses a transition, names the condition, and takes up writing once it can")
    func databaseWritesHeard() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        for (errno, condition) in Self.faults {
            store.injectWriteFailure(errno: errno)
            #expect(throws: SQLiteError.self) { try Outbox(store: store).enqueue(Self.item("k-\(errno)")) }
            #expect(store.health.status.condition == condition)
            // Reads go on: the queue can still be shown.
            #expect(try Outbox(store: store).depth().transitions == (errno == ENOSPC ? 0 : (errno == EROFS ? 1 : 2)))
            store.injectWriteFailure(errno: nil)
            try Outbox(store: store).enqueue(Self.item("k-\(errno)"))
            #expect(store.health.status.condition == .ok)
        }
    }

    @Test("the reserve: allocated at open, given up for a driver's change that found the disk full, made again once there is room; pings wait meanwhile")
    func reserve() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory, reserveBytes: 1 << 20)
        let reservePath = directory + "/reserve"
        var info = stat()
        #expect(stat(reservePath, &info) == 0 && info.st_size == 1 << 20 && info.st_blocks * 512 >= 1 << 20, "allocated, not sparse")
        #expect(store.health.mayWriteBulk)
        // The disk fills (injected): the first durable change gives up the reserve; the injected fault stays, so the
        // retry fails too and the change is refused; the reserve is in use.
        store.injectWriteFailure(errno: ENOSPC)
        #expect(throws: SQLiteError.self) { try Outbox(store: store).enqueue(Self.item("a")) }
        #expect(access(reservePath, F_OK) != 0)
        #expect(store.health.status.reserveInUse && !store.health.mayWriteBulk)
        // Space returns: the next write succeeds, and the reserve is made again (this disk has room for it).
        store.injectWriteFailure(errno: nil)
        try Outbox(store: store).enqueue(Self.item("a"))
        #expect(access(reservePath, F_OK) == 0)
        #expect(!store.health.status.reserveInUse && store.health.mayWriteBulk && store.health.status.condition == .ok)
    }

    @Test("the GPS reader never spins on a store that cannot be written: the recorder's waits grow from 1 s to 30 s, pings stay held and are written once it can",
          arguments: [ENOSPC, EROFS, EIO])
    func recorderBacksOff(errno: Int32) throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let recorder = PingRecorder(store: store, movingWindow: 5, stationaryWindow: 5)
        store.injectWriteFailure(errno: errno)
        // The reader's loop on virtual time: a wake-up for each sample at 1 Hz and for each deadline commitIfDue names.
        var now = 1000.0, nextSample = 1000.0, wakeups = 0, tries = 0
        var lastRetry: Double?
        var retryGaps: [Double] = []
        let end = 1000.0 + 600
        // Bounded: a wait of zero would loop here for ever (the reader's spin), and fail instead.
        while now < end, wakeups < 100_000 {
            wakeups += 1
            if now >= nextSample {
                recorder.append(StoreTests.ping(now), now: now, nextSampleIn: 1)
                nextSample += 1
            }
            let wait = recorder.commitIfDue(now: now) ?? .infinity
            #expect(wait >= PingRecorder.minimumWait)
            if let retry = recorder.retryAt, retry != lastRetry {
                tries += 1
                if let lastRetry { retryGaps.append(retry - lastRetry) }
                lastRetry = retry
            }
            now = min(now + wait, nextSample)
        }
        // 600 samples at 1 Hz: one wake-up each, and a few for the retries (1, 2, 4, 8, 16, then every 30 s).
        #expect(wakeups <= 600 + 30, "\(wakeups) wake-ups in 600 s")
        #expect(tries <= 30, "\(tries) tries in 600 s")
        #expect((retryGaps.max() ?? 0) <= 31 && (retryGaps.max() ?? 0) >= 25 && (retryGaps.min() ?? 0) >= 0.9, "\(retryGaps)")
        #expect(recorder.pendingCount == 600 && recorder.kept == 0)
        // Writable again: the next try writes every held ping.
        store.injectWriteFailure(errno: nil)
        _ = recorder.commitIfDue(now: (recorder.retryAt ?? now) + 0.1)
        #expect(recorder.pendingCount == 0 && recorder.kept == 600)
        #expect(try StoreTests.stored(store).count == 600)
        #expect(recorder.retryAt == nil && store.health.status.condition == .ok)
    }

    @Test("a parked reader with a broken store wakes no more than a healthy one: waits of the sample interval, never zero")
    func parkedNoSpin() throws {
        let directory = StoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let recorder = PingRecorder(store: store, movingWindow: 5, stationaryWindow: 120)
        store.injectWriteFailure(errno: ENOSPC)
        var now = 0.0, nextSample = 0.0, wakeups = 0
        while now < 3600, wakeups < 100_000 {
            wakeups += 1
            if now >= nextSample {
                recorder.append(StoreTests.ping(now, motion: .stationary), now: now, nextSampleIn: 10)
                nextSample += 10
            }
            now = min(now + (recorder.commitIfDue(now: now) ?? .infinity), nextSample)
        }
        // 360 samples; the retries ride on them or add at most one wake-up each.
        #expect(wakeups <= 2 * 360, "\(wakeups) wake-ups in an hour parked")
    }

    static func item(_ key: String) -> OutboxItemRecord {
        OutboxItemRecord(kind: .status, taskId: "t1", idempotencyKey: key, payload: Data("{}".utf8), createdAt: 1)
    }
}
