import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Files the daemon must not lose half of (spooled photos, diagnostic bundles, the backend tokens), with POSIX
/// calls: Foundation's `FileHandle` would link ICU into the daemon (docs/ARCHITECTURE.md, "Why no GRDB and no ICU").
///
/// A power cut keeps only what was synced: a file's data after its `fsync`, a name (a new file, a rename, a new
/// directory) after an `fsync` of the directory that holds it. Every write here ends with both.
public enum DurableFile {
    /// A failed system call, with its errno.
    public struct Failure: Error, CustomStringConvertible {
        public let call: String
        public let path: String
        public let errno: Int32
        public var description: String { "\(call) \(path): \(String(cString: strerror(errno)))" }

        public init(call: String, path: String, errno: Int32) {
            self.call = call
            self.path = path
            self.errno = errno
        }
    }

    /// Written to a temporary name, synced, renamed, and the directory synced: a crash or a power cut leaves the
    /// old state or the whole file. Missing directories are made (0700), durably; the file is 0600.
    public static func write(_ bytes: Data, to target: String) throws {
        let directory = Self.directory(of: target)
        try makeDirectory(directory)
        let temporary = target + ".partial"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(call: "open", path: temporary, errno: errno) }
        do {
            // An existing scratch file keeps its old mode through O_CREAT.
            guard fchmod(fd, 0o600) == 0 else { throw Failure(call: "fchmod", path: temporary, errno: errno) }
            try bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0, errno == EINTR { continue }
                    guard written > 0 else { throw Failure(call: "write", path: temporary, errno: errno) }
                    offset += written
                }
            }
            guard fsync(fd) == 0 else { throw Failure(call: "fsync", path: temporary, errno: errno) }
            guard close(fd) == 0 else { throw Failure(call: "close", path: temporary, errno: errno) }
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        guard Glibc.rename(temporary, target) == 0 else {
            let failure = Failure(call: "rename", path: target, errno: errno)
            unlink(temporary)
            throw failure
        }
        try syncDirectory(directory)
    }

    /// Written whole to a temporary name and renamed into place, not synced: a reader never sees half a file, and a
    /// power cut may leave the old one (for a file written again soon, such as node_exporter's metrics: no flash for a
    /// sync). The file is 0644: other users' tools read it.
    public static func replaceUnsynced(_ bytes: Data, at target: String) throws {
        let temporary = target + ".partial"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Failure(call: "open", path: temporary, errno: errno) }
        do {
            try bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0, errno == EINTR { continue }
                    guard written > 0 else { throw Failure(call: "write", path: temporary, errno: errno) }
                    offset += written
                }
            }
            guard close(fd) == 0 else { throw Failure(call: "close", path: temporary, errno: errno) }
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        guard Glibc.rename(temporary, target) == 0 else {
            let failure = Failure(call: "rename", path: target, errno: errno)
            unlink(temporary)
            throw failure
        }
    }

    /// Writes `bytes` at `offset` of `path` (made if missing, its directory too; anything after `offset` is cut
    /// first, so a torn tail goes) and syncs it: a resumable download's chunk.
    public static func write(_ bytes: Data, to path: String, at offset: Int) throws {
        let existed = access(path, F_OK) == 0
        if !existed { try makeDirectory(directory(of: path)) }
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(call: "open", path: path, errno: errno) }
        defer { close(fd) }
        guard ftruncate(fd, off_t(offset)) == 0 else { throw Failure(call: "ftruncate", path: path, errno: errno) }
        try bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let written = pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { throw Failure(call: "write", path: path, errno: errno) }
                done += written
            }
        }
        guard fsync(fd) == 0 else { throw Failure(call: "fsync", path: path, errno: errno) }
        if !existed { try syncDirectory(directory(of: path)) }
    }

    /// Cuts the file at `path` to `size` bytes, durably.
    public static func truncate(_ path: String, to size: Int) throws {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(call: "open", path: path, errno: errno) }
        defer { close(fd) }
        guard ftruncate(fd, off_t(size)) == 0, fsync(fd) == 0 else { throw Failure(call: "ftruncate", path: path, errno: errno) }
    }

    /// Renames a file in its directory, durably.
    public static func rename(_ path: String, to target: String) throws {
        guard Glibc.rename(path, target) == 0 else { throw Failure(call: "rename", path: target, errno: errno) }
        try syncDirectory(directory(of: target))
    }

    /// Makes `path` and any missing parents (0700), each new one durable in its parent.
    public static func makeDirectory(_ path: String) throws {
        var info = stat()
        if stat(path, &info) == 0 { return }
        let parent = directory(of: path)
        if parent != path { try makeDirectory(parent) }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else { throw Failure(call: "mkdir", path: path, errno: errno) }
        try syncDirectory(parent)
    }

    /// Makes the directory's entries durable (files created, renamed or removed in it).
    public static func syncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(call: "open", path: path, errno: errno) }
        defer { close(fd) }
        while fsync(fd) != 0 {
            guard errno == EINTR else { throw Failure(call: "fsync", path: path, errno: errno) }
        }
    }

    /// Removes the file at `path` durably (no error when it is already gone).
    public static func remove(_ path: String) throws {
        guard unlink(path) == 0 else {
            if errno == ENOENT { return }
            throw Failure(call: "unlink", path: path, errno: errno)
        }
        try syncDirectory(directory(of: path))
    }

    /// The whole file at `path`; nil when there is none (or something else than a regular file is there).
    public static func contents(_ path: String) throws -> Data? {
        guard let size = try sizeIfPresent(path) else { return nil }
        return try read(path, offset: 0, count: size)
    }

    /// Up to `count` bytes of the file at `path` from `offset` (fewer at its end).
    public static func read(_ path: String, offset: Int, count: Int) throws -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(call: "open", path: path, errno: errno) }
        defer { close(fd) }
        var bytes = Data(count: count)
        let total = try bytes.withUnsafeMutableBytes { buffer -> Int in
            var total = 0
            while total < count {
                let got = pread(fd, buffer.baseAddress! + total, count - total, off_t(offset + total))
                if got < 0, errno == EINTR { continue }
                guard got >= 0 else { throw Failure(call: "read", path: path, errno: errno) }
                if got == 0 { break }
                total += got
            }
            return total
        }
        return bytes.prefix(total)
    }

    /// The size of the regular file at `path`; nil when there is none or it is something else (a directory, a
    /// FIFO). Throws for any other failure (a failing disk, no permission): never read as "no file".
    public static func sizeIfPresent(_ path: String) throws -> Int? {
        do {
            return try regularFileSize(path)
        } catch let failure as Failure where failure.errno == ENOENT {
            return nil
        }
    }

    /// The size of the regular file at `path`; nil when it is something else (a directory, a device, a FIFO).
    public static func regularFileSize(_ path: String) throws -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { throw Failure(call: "stat", path: path, errno: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    /// The directory part of a path ("." for a bare name).
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
