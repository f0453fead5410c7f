#if canImport(Glibc)
import Glibc
#endif

/// Blocking connect to a Unix stream socket, with errors a person can act on.
public enum UnixSocketConnector {
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Nothing at the path.
        case noSocket(path: String)
        /// A socket file nobody listens on.
        case refused(path: String)
        case permissionDenied(path: String)
        case pathTooLong(path: String)
        case other(path: String, errno: Int32)

        public var description: String {
            switch self {
            case .noSocket(let path): "driverd is not running (no socket at \(path))"
            case .refused(let path): "driverd is not running (nothing listens on \(path))"
            case .permissionDenied(let path):
                "permission denied on \(path) (is your user in the driver group?)"
            case .pathTooLong(let path): "socket path too long: \(path)"
            case .other(let path, let code): "cannot connect to \(path): \(String(cString: strerror(code)))"
            }
        }
    }

    public enum Probe { case live, stale }

    /// Connects and returns the descriptor; the caller owns it.
    public static func connect(_ path: String) throws(Failure) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .other(path: path, errno: errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            close(fd)
            throw .pathTooLong(path: path)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result != 0 {
            let code = errno
            close(fd)
            switch code {
            case ENOENT: throw .noSocket(path: path)
            case ECONNREFUSED: throw .refused(path: path)
            case EACCES, EPERM: throw .permissionDenied(path: path)
            default: throw .other(path: path, errno: code)
            }
        }
        return fd
    }

    /// Whether something accepts connections on `path`.
    public static func probe(_ path: String) -> Probe {
        do {
            let fd = try connect(path)
            close(fd)
            return .live
        } catch {
            return .stale
        }
    }
}
