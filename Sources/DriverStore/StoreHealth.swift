import DriverAPI
import SQLiteKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The one owner of the state directory's health: ok, nearly full, full, read-only or failing, decided here from what
/// the file system says (`statvfs`, at start and when asked) and from every failed write's errno and SQLite result
/// code (the database's writes are heard through `DatabasePool.observeWrites`; the ping log's, the token file's and
/// the spools' are handed in by their writers). A change of condition is told to the listeners once (the daemon's
/// journal line); `driverctl status`, `diag`, the screen and the refusal of a change read it from here.
///
/// It also keeps the reserve: a file of `reserveBytes` allocated while there is room, given up when a driver's change
/// finds the disk full (another program filled it), so that the change is saved; made again once there is room.
/// While the reserve is in use, pings wait in memory (`mayWriteBulk`): what space there is goes to the driver's changes.
public final class StoreHealth: Sendable {
    public let directory: String
    public let reserveBytes: Int64
    private let reservePath: String

    private struct State {
        var condition = StoreStatus.Condition.ok
        var freeBytes: Int64?
        var detail: String?
        var reserveInUse = false
    }

    private let state = Mutex(State())
    /// Whether the condition is anything but ok, or the reserve is in use: a healthy write reads only this.
    private let degraded = Atomic<Bool>(false)
    private let listeners = Mutex<[@Sendable (StoreStatus) -> Void]>([])

    /// Free space below this reads as nearly full.
    public var nearlyFullBytes: Int64 { max(4 * reserveBytes, 8 << 20) }

    public init(directory: String, reserveBytes: Int64) {
        self.directory = directory
        self.reserveBytes = max(0, reserveBytes)
        reservePath = directory + "/reserve"
    }

    /// `listener` hears each change of condition (and of the reserve), on the thread that found it.
    public func onChange(_ listener: @escaping @Sendable (StoreStatus) -> Void) { listeners.withLock { $0.append(listener) } }

    public var status: StoreStatus {
        state.withLock { state in
            StoreStatus(
                condition: state.condition, path: directory, freeBytes: state.freeBytes, reserveBytes: reserveBytes,
                reserveInUse: state.reserveInUse, detail: state.detail)
        }
    }

    /// Whether a change can be saved now (as far as is known: a write may still fail).
    public var canSave: Bool { !degraded.load(ordering: .acquiring) || status.canSave }

    /// Whether what can wait in memory (pings, the odometer) may be written: not while the store cannot save, nor while
    /// the reserve is in use (its space is for the driver's changes).
    public var mayWriteBulk: Bool {
        guard degraded.load(ordering: .acquiring) else { return true }
        return state.withLock { $0.condition.mayWrite && !$0.reserveInUse }
    }

    // MARK: What the disk said

    /// What a failed write means for the store: a condition, or nil for a failure that is not the disk's (a bug, a
    /// constraint, a missing file).
    public static func condition(of error: any Error) -> StoreStatus.Condition? {
        let failure: DiskFailure? = switch error {
        case let error as SQLiteError: error.diskFailure
        case let error as DurableFile.Failure: DiskFailure(errno: error.errno)
        default: nil
        }
        switch failure {
        case .full: return .full
        case .readOnly: return .readOnly
        // Past a file-size limit SQLite's I/O error came (FullDiskTests, under make test's load) with
        // `sqlite3_system_errno` 0 instead of EFBIG; why is not known. Under a finite limit, an I/O error without an
        // errno is taken for the limit: full, as EFBIG itself would say (the status and every message alike).
        case .failing: return (error as? SQLiteError)?.systemErrno == 0 && fileSizeLimited ? .full : .failing
        case nil: return nil
        }
    }

    /// A write failed: the condition it shows (nil, and nothing changes, when the failure is not the disk's).
    @discardableResult
    public func noteFailure(_ error: any Error) -> StoreStatus.Condition? {
        guard var condition = Self.condition(of: error) else { return nil }
        let (free, readOnly) = measure()
        // A full disk that is also mounted read-only is read-only: that is what the operator must mend.
        if readOnly { condition = .readOnly }
        update { state in
            state.condition = condition
            state.freeBytes = free
            state.detail = Self.detail(of: error)
        }
        return condition
    }

    /// A write succeeded: a full or failing store takes up writing (nearly full while space is short).
    public func noteWritten() {
        guard degraded.load(ordering: .acquiring) else { return }
        let (free, readOnly) = measure()
        update { state in
            state.freeBytes = free
            state.condition = readOnly ? .readOnly : room(free)
            if state.condition.mayWrite { state.detail = nil }
        }
        remakeReserveIfRoom()
    }

    /// Looks at the file system: at start (before the first write can fail) and when asked (a status, a retry's turn).
    /// A read-only mount is read-only whatever the writes said, and a read-only store ends only when a file can be
    /// made again; a full store ends once there is room beyond the reserve; a failing disk ends only with a write that
    /// succeeds.
    @discardableResult
    public func check() -> StoreStatus {
        let (free, readOnly) = measure()
        update { state in
            state.freeBytes = free
            if readOnly {
                state.condition = .readOnly
                return
            }
            switch state.condition {
            case .failing:
                break
            case .full:
                if let free, free > reserveBytes + Self.margin { state.condition = room(free) }
            case .readOnly:
                // ext4 after an error (`emergency_ro`) refuses writes with EROFS while statvfs still says read-write:
                // only a write tells. A file made and removed, while read-only only.
                if probeWrite() { state.condition = room(free) }
            case .ok, .nearlyFull:
                state.condition = room(free)
            }
            if state.condition.mayWrite { state.detail = nil }
        }
        remakeReserveIfRoom()
        return status
    }

    /// Room beyond this (bytes) ends a full store: a little more than one write, so that it does not flap.
    static let margin: Int64 = 1 << 20

    /// What free space alone says: full under the margin (said before a write fails, at start too: whether the
    /// driver's next change can still be saved is the reserve's, `StoreStatus.canSave`), nearly full under the warning
    /// line, else ok.
    private func room(_ free: Int64?) -> StoreStatus.Condition {
        guard let free else { return .ok }
        if free < Self.margin { return .full }
        return free < nearlyFullBytes ? .nearlyFull : .ok
    }

    // MARK: The reserve

    /// Allocates the reserve when it is missing and there is room for it and more (at start, and after space returned).
    public func prepareReserve() { remakeReserveIfRoom(force: true) }

    /// Gives up the reserve for a driver's change that found the disk full. Returns whether there was one to give.
    func releaseReserve() -> Bool {
        guard reserveBytes > 0, access(reservePath, F_OK) == 0 else { return false }
        guard unlink(reservePath) == 0 else { return false }
        update { $0.reserveInUse = true }
        return true
    }

    private func remakeReserveIfRoom(force: Bool = false) {
        guard reserveBytes > 0, force || state.withLock({ $0.reserveInUse }) else { return }
        if access(reservePath, F_OK) == 0 {
            update { $0.reserveInUse = false }
            return
        }
        // Only with room for the reserve and a working margin: never the last bytes of a disk that is filling.
        guard let free = measure().free, free > 2 * reserveBytes + Self.margin else {
            update { $0.reserveInUse = true }
            return
        }
        let fd = open(reservePath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        // Allocated, not written: no flash wear, and the blocks are the file's (posix_fallocate, not a sparse file).
        let result = posix_fallocate(fd, 0, off_t(reserveBytes))
        close(fd)
        guard result == 0 else {
            unlink(reservePath)
            return
        }
        update { $0.reserveInUse = false }
    }

    // MARK: Refusals

    /// The refusal of a driver's change that `error` kept from being saved: `notSaved` with the reason and the free
    /// bytes when the disk failed, `internalError` (a bug) otherwise. `what` names the change ("the delivery").
    /// Never says it will be retried: it will not be, the driver must do it again.
    public func refusal(_ what: String, _ error: any Error) -> APIError {
        guard let condition = noteFailure(error) else { return APIError(.internalError, "\(what) was not saved: \(error)") }
        let status = self.status
        var data: [String: JSONValue] = ["reason": .string(condition.rawValue)]
        if let free = status.freeBytes { data["freeBytes"] = .number(String(free)) }
        return APIError(.notSaved, "\(what) was not saved: this unit's storage is \(status.summary). Nothing was changed", data: .object(data))
    }

    #if DEBUG
    /// Tests' failing disk (`Store.injectWriteFailure`): the file system looks full (ENOSPC) or read-only (EROFS) to the
    /// checks here too, as a real one would; EIO shows only in writes.
    private let injected = Mutex<Int32?>(nil)
    func inject(errno: Int32?) { injected.withLock { $0 = errno } }
    #endif

    // MARK: Inside

    private func update(_ change: (inout State) -> Void) {
        let changed = state.withLock { state -> StoreStatus? in
            let before = (state.condition, state.reserveInUse)
            change(&state)
            degraded.store(state.condition != .ok || state.reserveInUse, ordering: .releasing)
            guard before != (state.condition, state.reserveInUse) else { return nil }
            return StoreStatus(
                condition: state.condition, path: directory, freeBytes: state.freeBytes, reserveBytes: reserveBytes,
                reserveInUse: state.reserveInUse, detail: state.detail)
        }
        guard let changed else { return }
        for listener in listeners.withLock({ $0 }) { listener(changed) }
    }

    /// Free bytes for an unprivileged writer, and whether the file system is read-only: mounted so (statvfs), or made so
    /// by the kernel after an error without saying so to statvfs (ext4's `emergency_ro`, in the mount table's options).
    private func measure() -> (free: Int64?, readOnly: Bool) {
        #if DEBUG
        switch injected.withLock({ $0 }) {
        case ENOSPC: return (0, false)
        case EROFS: return (nil, true)
        default: break
        }
        #endif
        var info = statvfs()
        guard statvfs(directory, &info) == 0 else { return (nil, false) }
        let free = Int64(info.f_bavail) * Int64(info.f_frsize)
        return (free, info.f_flag & UInt(ST_RDONLY) != 0 || Self.kernelSaysReadOnly(directory))
    }

    /// Whether this process may not grow a file without bound (`RLIMIT_FSIZE`'s soft limit: systemd's `LimitFSIZE=`,
    /// `prlimit --fsize`).
    static var fileSizeLimited: Bool {
        var limit = rlimit()
        return getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0 && limit.rlim_cur != rlim_t.max
    }

    /// Whether `/proc/self/mountinfo` names the directory's file system read-only (`ro` or `emergency_ro` among its
    /// super-block options). A read-only mount point is statvfs's to tell: under systemd's ProtectSystem=strict the
    /// same device is mounted read-only at / and read-write at the state directory. A read of the kernel's table, no
    /// write: cheap enough for every status.
    static func kernelSaysReadOnly(_ directory: String) -> Bool {
        var status = stat()
        // No /proc (a chroot, a test without it): statvfs alone decides, as it did before.
        // Its size reads as 0: read up to a bound (a unit's table is a few KB).
        guard stat(directory, &status) == 0, let table = try? DurableFile.read("/proc/self/mountinfo", offset: 0, count: 1 << 20) else { return false }
        let device = UInt64(status.st_dev)
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff), minor = (device & 0xff) | ((device >> 12) & ~0xff)
        return Self.readOnly(inMountInfo: String(decoding: table, as: UTF8.self), device: "\(major):\(minor)")
    }

    /// Whether the super-block of `device` (`MAJOR:MINOR`) in `mountinfo`'s text is read-only (proc(5)'s format: the
    /// fields after " - " are the type, the source and the super-block's options, the same on every mount of it).
    static func readOnly(inMountInfo table: String, device: String) -> Bool {
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 6, fields[2] == device, let dash = fields.firstIndex(of: "-"), dash + 3 < fields.count else { continue }
            let options = fields[dash + 3].split(separator: ",")
            return options.contains("ro") || options.contains("emergency_ro")
        }
        return false
    }

    /// Whether a file can be made in the directory (and is removed again).
    private func probeWrite() -> Bool {
        #if DEBUG
        if injected.withLock({ $0 }) != nil { return false }
        #endif
        let path = directory + "/.write-probe"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        close(fd)
        unlink(path)
        return true
    }

    private static func detail(of error: any Error) -> String {
        switch error {
        case let error as SQLiteError where error.systemErrno != 0: String(cString: strerror(error.systemErrno))
        case let error as SQLiteError: error.message
        case let error as DurableFile.Failure: String(cString: strerror(error.errno))
        default: "\(error)"
        }
    }
}

extension StoreStatus.Condition {
    /// Whether writes go on in this condition.
    var mayWrite: Bool { self == .ok || self == .nearlyFull }
}
