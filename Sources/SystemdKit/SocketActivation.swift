#if canImport(Glibc)
import Glibc
#endif
import CSystemd

/// Sockets passed by the service manager (`LISTEN_FDS`, `LISTEN_PID`, `LISTEN_FDNAMES`).
public enum SocketActivation {
    public struct Socket: Sendable, Equatable {
        public let descriptor: Int32
        public let name: String
    }

    /// Takes the passed sockets (once: the environment is cleared so children do not inherit them).
    /// Empty when the daemon was not socket-activated.
    public static func takeListeningSockets() throws(SystemdError) -> [Socket] {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = nil
        let count = try SystemdError.check("sd_listen_fds_with_names", sd_listen_fds_with_names(1, &names))
        defer {
            if let names {
                for index in 0..<count { free(names[index]) }
                free(names)
            }
        }
        let first = csystemd_listen_fds_start()
        return (0..<count).map { index in
            Socket(descriptor: first + Int32(index), name: names?[index].map { String(cString: $0) } ?? "unknown")
        }
    }

    /// Whether `descriptor` is a listening Unix stream socket.
    public static func isListeningUnixStream(_ descriptor: Int32) -> Bool {
        sd_is_socket_unix(descriptor, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0
    }
}
