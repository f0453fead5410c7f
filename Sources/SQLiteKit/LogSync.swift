#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Makes what a WAL database committed so far durable: an fdatasync of its write-ahead log, which is what
/// `synchronous = FULL` does inside every commit. Split from the commit, a caller can start work that depends on
/// the change (sending it) while the disk catches up, and commits that come meanwhile share one sync.
///
/// The log is opened by path, read-only, and opened again when its inode changes (SQLite keeps one log file for as
/// long as a connection is open; a checkpoint truncates it in place).
final class LogSync: Sendable {
    private let path: String
    private let file = Mutex<(descriptor: Int32, inode: UInt64)?>(nil)

    init(databasePath: String) { path = databasePath + "-wal" }

    deinit {
        if let open = file.withLock({ $0 }) { close(open.descriptor) }
    }

    func sync() throws(SQLiteError) {
        var status = stat()
        guard stat(path, &status) == 0 else {
            // No log: nothing committed in WAL mode is waiting (SQLite removes it only when the last connection closes).
            if errno == ENOENT { return }
            throw Self.failure("stat")
        }
        let descriptor = try file.withLock { open throws(SQLiteError) -> Int32 in
            if let current = open, current.inode == UInt64(status.st_ino) { return current.descriptor }
            if let current = open { close(current.descriptor) }
            let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw Self.failure("open") }
            open = (descriptor, UInt64(status.st_ino))
            return descriptor
        }
        while fdatasync(descriptor) != 0 {
            guard errno == EINTR else { throw Self.failure("fdatasync") }
        }
    }

    private static func failure(_ call: String) -> SQLiteError {
        // SQLITE_IOERR_FSYNC: what SQLite itself reports when a sync fails.
        let failure = errno
        return SQLiteError(
            resultCode: 10 | (4 << 8), message: "\(call) of the write-ahead log failed: \(String(cString: strerror(failure)))",
            systemErrno: failure)
    }
}
