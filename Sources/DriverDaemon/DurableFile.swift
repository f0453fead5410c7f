import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Files the daemon must not lose half of (spooled photos, diagnostic bundles), with POSIX calls: Foundation's
/// `FileHandle` would link ICU into the daemon (docs/LEAN.md).
enum DurableFile {
    /// A failed system call, with its errno.
    struct Failure: Error, CustomStringConvertible {
        let call: String
        let path: String
        let errno: Int32
        var description: String { "\(call) \(path): \(String(cString: strerror(errno)))" }
    }

    /// Written to a temporary name, flushed, then renamed, and the directory flushed: a crash leaves the old
    /// state or the whole file. The directory is made (0700) if needed; the file is 0600.
    static func write(_ bytes: Data, to target: String) throws {
        let directory = Self.directory(of: target)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = target + ".partial"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
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
            guard fsync(fd) == 0 else { throw Failure(call: "fsync", path: temporary, errno: errno) }
            guard close(fd) == 0 else { throw Failure(call: "close", path: temporary, errno: errno) }
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, target) == 0 else {
            let failure = Failure(call: "rename", path: target, errno: errno)
            unlink(temporary)
            throw failure
        }
        // The rename itself is durable only once the directory's entry is on disk.
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }

    /// Up to `count` bytes of the file at `path` from `offset` (fewer at its end).
    static func read(_ path: String, offset: Int, count: Int) throws -> Data {
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

    /// The size of the regular file at `path`; nil when it is something else (a directory, a device, a FIFO).
    static func regularFileSize(_ path: String) throws -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { throw Failure(call: "stat", path: path, errno: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    /// The directory part of a path ("." for a bare name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
