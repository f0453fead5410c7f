import DriverAPI
import Synchronization

/// One client connection, as handlers see it: who called, and a place to hang things that must end with the
/// connection (subscriptions, rate requests).
public final class RPCConnection: Sendable {
    public let id: UInt64
    public let peer: PeerCredentials
    public let mayMutate: Bool
    private let closeHandlers = Mutex<[@Sendable () -> Void]?>([])
    private let notifications = Mutex<AsyncStream<[UInt8]>.Continuation?>(nil)

    public init(id: UInt64, peer: PeerCredentials, mayMutate: Bool) {
        self.id = id
        self.peer = peer
        self.mayMutate = mayMutate
    }

    /// Runs `handler` once when the connection closes (at once if it already has).
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        let runNow = closeHandlers.withLock { handlers -> Bool in
            guard handlers != nil else { return true }
            handlers!.append(handler)
            return false
        }
        if runNow { handler() }
    }

    /// Queues a server-to-client notification (`Envelope.notification`). A client that does not read keeps
    /// only the newest ones: a slow front end never makes the daemon buffer without bound.
    public func notify(_ line: [UInt8]) {
        _ = notifications.withLock { $0?.yield(line) }
    }

    /// Called by the server: where notifications go.
    func attach(_ continuation: AsyncStream<[UInt8]>.Continuation) {
        notifications.withLock { $0 = continuation }
    }

    /// Called by the server when the connection ends.
    public func closed() {
        notifications.withLock { continuation in
            continuation?.finish()
            continuation = nil
        }
        let handlers = closeHandlers.withLock { handlers in
            defer { handlers = nil }
            return handlers ?? []
        }
        for handler in handlers { handler() }
    }
}
