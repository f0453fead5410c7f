#if canImport(Glibc)
import Glibc
#endif

/// The socket file's life: refuse to steal a live socket, replace a stale one, set its mode and group.
public enum UnixSocketPath {
    public struct Error: Swift.Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Makes `path` ready to bind: absent, or a stale socket that nobody answers on (removed).
    public static func prepare(_ path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw Error(description: "cannot inspect \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw Error(description: "\(path) exists and is not a socket; refusing to replace it")
        }
        switch UnixSocketConnector.probe(path) {
        case .live:
            throw Error(description: "another daemon is listening on \(path); refusing to take its socket")
        case .stale:
            guard unlink(path) == 0 || errno == ENOENT else {
                throw Error(description: "cannot remove stale socket \(path): \(String(cString: strerror(errno)))")
            }
        }
    }

    public static func applyPermissions(path: String, mode: mode_t, groupID: UInt32?) throws {
        if let groupID, chown(path, uid_t.max, groupID) != 0 {
            throw Error(description: "cannot give \(path) to group \(groupID): \(String(cString: strerror(errno)))")
        }
        guard chmod(path, mode) == 0 else {
            throw Error(description: "cannot set mode of \(path): \(String(cString: strerror(errno)))")
        }
    }

    public static func rename(_ from: String, to path: String) throws {
        guard Glibc.rename(from, path) == 0 else {
            throw Error(description: "cannot move socket into place at \(path): \(String(cString: strerror(errno)))")
        }
    }

    public static func remove(_ path: String) { unlink(path) }
}
