#if canImport(Glibc)
import Glibc
#endif
import CSystemd

/// The sd_notify protocol: tells the service manager about readiness, status, liveness and shutdown.
/// Without `NOTIFY_SOCKET` (not under systemd) every call is a no-op.
public struct ServiceNotifier: Sendable {
    public enum State: Sendable, Equatable {
        case ready
        case stopping
        case reloading
        case watchdog
        case status(String)
        case mainPID(Int32)

        var assignment: String {
            switch self {
            case .ready: "READY=1"
            case .stopping: "STOPPING=1"
            case .reloading: "RELOADING=1"
            case .watchdog: "WATCHDOG=1"
            // A newline would end the assignment early.
            case .status(let text): "STATUS=" + text.replacing("\n", with: " ")
            case .mainPID(let pid): "MAINPID=\(pid)"
            }
        }
    }

    public init() {}

    /// Whether a service manager listens (`NOTIFY_SOCKET` set).
    public var isSupervised: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// Sends the states in one datagram. Returns false when nobody listens.
    @discardableResult
    public func notify(_ states: State...) throws(SystemdError) -> Bool { try notify(states) }

    @discardableResult
    public func notify(_ states: [State]) throws(SystemdError) -> Bool {
        let message = states.map(\.assignment).joined(separator: "\n")
        return try SystemdError.check("sd_notify", sd_notify(0, message)) > 0
    }

    /// The watchdog interval the manager expects pings within (`WATCHDOG_USEC`), or nil when disabled.
    public func watchdogInterval() throws(SystemdError) -> Duration? {
        var microseconds: UInt64 = 0
        guard try SystemdError.check("sd_watchdog_enabled", sd_watchdog_enabled(0, &microseconds)) > 0 else {
            return nil
        }
        return .microseconds(Int64(microseconds))
    }
}
